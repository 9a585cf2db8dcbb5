"""Drafting sample-level rubric criteria with an LLM (MTalk-Bench level 3): for each dialogue
the judge sees the user's turns (tags kept), its dimension and capability and the criteria it
already has, and proposes N yes/no questions about the system's replies. The drafts go into a
review file (``benchmarks.rubric_drafts``) as ``pending``; only criteria a person accepts or
edits are ever used. The prompt is ours.

The answer is JSON ``{"criteria": [{"text": ...}, ...]}`` with exactly N items, validated
against a schema; an empty, duplicated or non-question text is a parse failure too. Parse
failures are retried and counted; a dialogue whose judge never answers in format is listed
under ``failures`` and drafted again by the next run (resumable: drafted dialogues are
skipped)."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from voxeval.benchmarks.mtalk.dialogue import Dialogue
from voxeval.benchmarks.rubric_drafts import RubricDrafts, read_drafts, write_drafts
from voxeval.errors import ConfigError, EndpointError
from voxeval.json_types import JSONObject
from voxeval.scoring.call_judges.judged_call import RatedTemplate
from voxeval.scoring.judge import Judge, JudgeOutputError, JudgeResult
from voxeval.scoring.judge_answer import as_objects

SYSTEM = (
    "You write evaluation criteria for spoken dialogues between a user and a voice "
    "assistant. Each criterion is a yes/no question a grader answers by reading the "
    "assistant's replies. Answer only with the JSON object you are asked for."
)

USER = """\
Dimension under test: {dimension} ({dimension_hint})
Capability under test: {capability}

The user's turns (annotations in [brackets] are sounds, in <angle brackets> how something is
said or what happens around the speaker):
{turns}

Criteria this dialogue already has (do not repeat or overlap them):
{existing}

Write {count} new yes/no questions specific to this dialogue that a good reply must satisfy:
each checks one thing, can be answered from the replies alone, and tests the dimension above
(for example whether the reply picks up the user's tone, a sound in the background, or a
detail said in an earlier turn). Answer as
{{"criteria": [{{"text": "Does the reply ...?"}}, ...]}} with exactly {count} items."""

DIMENSION_HINTS = {
    "semantic": "what is said: understanding, memory across turns, reasoning, safety",
    "paralinguistic": "how it is said: emotion, pace, pitch, hesitation, voice",
    "ambient": "what is heard around the user: sounds, noise, other speakers",
}

# Seeds of different dialogues lie this far apart, so a dialogue's retries (seed + attempt)
# never reuse another dialogue's seed.
SEED_STRIDE = 100


def drafts_schema(count: int) -> JSONObject:
    item: JSONObject = {
        "type": "object",
        "properties": {"text": {"type": "string", "minLength": 1}},
        "required": ["text"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "criteria": {"type": "array", "items": item, "minItems": count, "maxItems": count}
        },
        "required": ["criteria"],
        "additionalProperties": False,
    }


TEMPLATE = RatedTemplate(
    name="mtalk-rubric-drafts",
    system=SYSTEM,
    user=USER,
    output="json",
    min_score=1,
    max_score=1000,
)


def draft_texts(answer: JSONObject, existing: Iterable[str] = ()) -> list[str]:
    """The drafted texts, whitespace tidied; each must be a question, new and distinct."""
    seen = {" ".join(t.split()).casefold() for t in existing}
    texts: list[str] = []
    for index, item in enumerate(as_objects(answer["criteria"], "criteria")):
        text = " ".join(str(item["text"]).split())
        if not text.endswith("?"):
            raise JudgeOutputError(f"criteria.{index}: {text[:60]!r} is not a yes/no question")
        if text.casefold() in seen:
            raise JudgeOutputError(f"criteria.{index}: {text[:60]!r} repeats a criterion")
        seen.add(text.casefold())
        texts.append(text)
    return texts


def _rate(answer: JSONObject, existing: list[str]) -> float:
    return float(len(draft_texts(answer, existing)))


def dialogue_seed(seed: int, dialogue_id: str) -> int:
    """The judge seed of a dialogue: from the run's seed and the dialogue id, so a resumed or
    partial run sends the same seed for the same dialogue."""
    return ((seed * 1_000_003 + zlib.crc32(dialogue_id.encode())) % 10_000_000) * SEED_STRIDE


def _variables(dialogue: Dialogue, count: int) -> dict[str, str | int]:
    cap = dialogue.capability
    capability = "not given"
    if cap is not None:
        capability = cap.tier1 + (f" / {cap.tier2}" if cap.tier2 else "")
    existing = dialogue.rubrics.used()
    return {
        "dimension": dialogue.dimension,
        "dimension_hint": DIMENSION_HINTS[dialogue.dimension],
        "capability": capability,
        "turns": "\n".join(f"Turn {i}: {t.transcript}" for i, t in enumerate(dialogue.turns, 1)),
        "existing": "\n".join(f"- {c.text}" for c in existing) or "(none)",
        "count": count,
    }


@dataclass(frozen=True)
class DraftOutcome:
    """The drafted texts (None when the judge never answered in format) and the judge's
    bookkeeping."""

    texts: list[str] | None
    result: JudgeResult


def draft_criteria(judge: Judge, dialogue: Dialogue, count: int, seed: int = 0) -> DraftOutcome:
    existing = [c.text for c in dialogue.rubrics.used()]
    template = replace(
        TEMPLATE, schema=drafts_schema(count), rate=partial(_rate, existing=existing)
    )
    result = judge.grade(
        template, _variables(dialogue, count), seed=dialogue_seed(seed, dialogue.id)
    )
    if result.value is None or not isinstance(result.parsed, dict):
        return DraftOutcome(None, result)
    return DraftOutcome(draft_texts(result.parsed, existing), result)


@dataclass(frozen=True)
class GenerationSummary:
    drafted: int  # dialogues drafted by this run
    skipped: int  # already in the file
    failed: dict[str, str]  # dialogue id -> why (left for the next run)
    criteria: int  # criteria drafted by this run
    parse_failures: int
    judge_calls: int
    unreachable: str | None = None  # the endpoint error that stopped the run


def generate_drafts(
    dialogues: list[Dialogue],
    judge: Judge,
    out: str | Path,
    *,
    suite: str,
    per_dialogue: int,
    seed: int = 0,
    on_dialogue: Callable[[str, str], None] | None = None,
) -> GenerationSummary:
    """Draft ``per_dialogue`` criteria for every dialogue not yet in ``out`` and save after
    each one (atomically), so an interrupted run resumes where it stopped. A file written for
    another suite or count is refused. ``on_dialogue(id, outcome)`` reports progress
    (``drafted``, ``skipped`` or ``failed``)."""
    file = Path(out)
    if file.exists():
        drafts = read_drafts(file)
        if drafts.per_dialogue != per_dialogue or drafts.seed != seed:
            raise ConfigError(
                f"{file}: drafted with per_dialogue={drafts.per_dialogue}, seed={drafts.seed}; "
                f"this run asks for per_dialogue={per_dialogue}, seed={seed} (use another file)"
            )
        if drafts.suite != suite:
            raise ConfigError(f"{file}: suite: drafted for {drafts.suite}, not {suite}")
    else:
        drafts = RubricDrafts(suite=suite, per_dialogue=per_dialogue, seed=seed)
    drafts.judge = judge.identity()
    drafted = skipped = criteria = failures = calls = 0
    failed: dict[str, str] = {}
    for dialogue in dialogues:
        if drafts.drafted(dialogue.id):
            skipped += 1
            if on_dialogue is not None:
                on_dialogue(dialogue.id, "skipped")
            continue
        try:
            outcome = draft_criteria(judge, dialogue, per_dialogue, seed)
        except EndpointError as exc:
            # our side, and every later dialogue would fail the same way: stop; the next
            # run resumes here
            failed[dialogue.id] = f"judge endpoint: {exc}"
            drafts.failures[dialogue.id] = failed[dialogue.id]
            write_drafts(file, drafts)
            if on_dialogue is not None:
                on_dialogue(dialogue.id, "failed")
            return GenerationSummary(
                drafted, skipped, failed, criteria, failures, calls, unreachable=str(exc)
            )
        else:
            failures += outcome.result.parse_failures
            calls += outcome.result.attempts
            if outcome.texts is None:
                failed[dialogue.id] = outcome.result.error or "no answer in format"
            else:
                drafts.add(dialogue, outcome.texts, outcome.result.accounting())
                drafted += 1
                criteria += len(outcome.texts)
        if dialogue.id in failed:
            drafts.failures[dialogue.id] = failed[dialogue.id]
        write_drafts(file, drafts)
        if on_dialogue is not None:
            on_dialogue(dialogue.id, "failed" if dialogue.id in failed else "drafted")
    write_drafts(file, drafts)
    return GenerationSummary(drafted, skipped, failed, criteria, failures, calls)
