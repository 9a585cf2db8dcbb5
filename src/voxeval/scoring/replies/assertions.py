"""Offline assertion score: deterministic checks of the reply transcripts, no LLM needed.

Each assertion (``require_any``, ``require_all``, ``number``, ``forbid``) passes or fails on
one transcript; a transcript's score is the share of assertions it passes and the item score
is the mean over the k transcripts. Matching is fuzzy: a value matches when some window of
the transcript with as many words (+-1) reaches ``threshold`` (rapidfuzz ratio, 0-100) after
normalisation, so "Pari" matches "Paris" but "cat" does not match "catalogue".
"""

from __future__ import annotations

import re
from statistics import mean
from typing import Any

from rapidfuzz import fuzz

from voxeval.json_types import JSONReadValue
from voxeval.scoring.metric import FailureValue, metric
from voxeval.scoring.replies.reply_record import AssertionLike, ReplyRecord, ScoringResources
from voxeval.scoring.score import Score
from voxeval.scoring.text.text_normaliser import normalise_english

# After Whisper's normaliser the number 1 is the word "one" (both "1" and "one" end up so) and
# "point five" is ".5".
_NUMBER = re.compile(r"-?(?:\d+(?:\.\d+)?|\.\d+)|\bone\b")


def best_match(value: str, text: str) -> tuple[float, str]:
    """Best fuzzy score (0-100) of ``value`` against word windows of ``text``, and the window."""
    target = normalise_english(value)
    words = normalise_english(text).split()
    if not target or not words:
        return 0.0, ""
    n = len(target.split())
    best, where = 0.0, ""
    for size in {max(1, n - 1), n, n + 1}:
        for i in range(max(1, len(words) - size + 1)):
            window = " ".join(words[i : i + size])
            score = float(fuzz.ratio(target, window))
            if score > best:
                best, where = score, window
    return best, where


def numbers_in(text: str) -> list[float]:
    return [1.0 if x == "one" else float(x) for x in _NUMBER.findall(normalise_english(text))]


def check(assertion: AssertionLike, text: str) -> tuple[bool, dict[str, JSONReadValue]]:
    """Whether ``text`` satisfies ``assertion``, with what matched."""
    if assertion.kind == "number":
        found = numbers_in(text)
        targets = [float(v.replace(",", "")) for v in assertion.values]
        hits = [x for x in found if any(abs(x - t) <= assertion.tolerance for t in targets)]
        return bool(hits), {"found": found[:20], "matched": hits[:5]}
    matches = {v: best_match(v, text) for v in assertion.values}
    present = {v: s >= assertion.threshold for v, (s, _) in matches.items()}
    info: dict[str, JSONReadValue] = {
        "matches": {v: {"score": round(s, 1), "window": w} for v, (s, w) in matches.items()}
    }
    if assertion.kind == "require_any":
        return any(present.values()), info
    if assertion.kind == "require_all":
        return all(present.values()), info
    if assertion.kind == "forbid":
        return not any(present.values()), info
    raise ValueError(f"unknown assertion kind {assertion.kind!r}")


@metric(
    "assertions",
    better="higher",
    failure=FailureValue(0.0, False, "no assertion met"),
    protocols=("single_turn",),
)
def assertion_score(record: ReplyRecord, resources: ScoringResources) -> Score:
    if not record.assertions:
        return Score.not_run("the item has no assertions")
    transcripts = resources.transcripts(record)
    per_transcript: list[float] = []
    outcomes: list[list[bool]] = [[] for _ in record.assertions]
    evidence: list[list[dict[str, Any]]] = [[] for _ in record.assertions]
    for text in transcripts.texts:
        passed = []
        for j, assertion in enumerate(record.assertions):
            ok, info = check(assertion, text)
            outcomes[j].append(ok)
            evidence[j].append(info)
            passed.append(ok)
        per_transcript.append(sum(passed) / len(passed))
    details = {
        "per_transcript": per_transcript,
        "transcripts_rejected": transcripts.rejected,
        "assertions": [
            {
                "kind": a.kind,
                "values": list(a.values),
                "pass_rate": mean(outcomes[j]),
                "evidence": evidence[j],
            }
            for j, a in enumerate(record.assertions)
        ],
    }
    value = mean(per_transcript)
    return Score(value=value, passed=value >= 1.0, details=details)
