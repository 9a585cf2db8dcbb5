"""Checklist judge: each transcript of the spoken reply is graded 1-10 against a general
checklist (what every spoken reply must do) followed by the query's own checklist; the item
score is the mean over the k transcripts. A reply spoken in another language than the query
scores the scale's minimum without a judge call: a user who cannot understand the answer got
nothing from it, however good its content.

The prompt is ours. It asks the judge to weigh what the reply gets right and wrong, not how
much it says, because text judges tend to reward longer answers and a spoken reply should
be short. Score bands follow the WildSpeech protocol. ``scoring.judge_protocol: reference``
switches to the reference judge's sampling and general checklist, and ``scoring.judge_prompt``
to a prompt file of the user's (``voxeval.scoring.replies.checklist_settings``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from statistics import mean
from typing import Any

from voxeval.errors import ProviderUnavailable
from voxeval.json_types import JSONReadValue
from voxeval.providers.http.openai_http import RequestCounts
from voxeval.scoring.judge import JudgeTemplate
from voxeval.scoring.metric import FailureValue, metric
from voxeval.scoring.replies.checklist_settings import (
    ChecklistJudging,
    JudgeProtocol,
    reference_judging,
    template_from_file,
)
from voxeval.scoring.replies.reply_record import ReplyRecord, ScoringResources
from voxeval.scoring.score import Score

CHECKLIST_SYSTEM = (
    "You grade the answers of a voice assistant. The user spoke a request aloud and the "
    "assistant answered aloud; you see an automatic transcript of each. Grade fairly and "
    "consistently, and follow the required output format exactly."
)

CHECKLIST_USER = """\
The user said:
[query]
{query}
[/query]

The assistant replied (speech-recognition transcript, so ignore odd spelling or punctuation):
[reply]
{reply}
[/reply]

Points to check (the first ones apply to every request, the rest to this one):
[checklist]
{checklist}
[/checklist]

How to grade:
- The checklist lists what a good answer to this particular request gets right and the traps
  it avoids. It is guidance, not an answer key: a reply may meet the user's need without
  covering every point, and you may weigh anything else that matters.
- Judge correctness, relevance and whether the request was actually fulfilled.
- Length is not merit. The reply is heard, not read: a short reply that fully meets the need
  deserves the same score as a long one, and padding, repetition, lists read aloud or
  content nobody asked for are weaknesses. Never raise a score because a reply says more.
- An empty or unintelligible reply has no value.

Score bands (1 to 10):
1-2  no value: irrelevant, wrong in essence, or empty.
3-4  partly useful: several errors or serious gaps, but something of value.
5-6  flawed: minor errors or gaps, yet it broadly meets the need.
7-8  meets the need well: no real flaws, at most small issues.
9-10 excellent: fully meets the need with virtually nothing to improve.

Write a short analysis of what the user wants, then the reply's strengths and weaknesses.
End with one final line of exactly this form and nothing after it:
Score: N"""

# Prepended to every query's checklist (our wording): what any spoken answer must get right.
GENERAL_CHECKLIST: tuple[str, ...] = (
    "Answers what the user actually asked, not a neighbouring question.",
    "States nothing false and invents no names, numbers or facts.",
    "Is easy to follow by ear: to the point, no markup, symbols or long lists read aloud.",
    "Uses the language the user spoke and a tone that suits the request.",
)
NO_CHECKLIST = "(no specific points for this request: judge on correctness and usefulness)"

CHECKLIST_TEMPLATE = JudgeTemplate(
    name="wildspeech-checklist",
    system=CHECKLIST_SYSTEM,
    user=CHECKLIST_USER,
    output="score_line",
    min_score=1,
    max_score=10,
)


# voxeval's own setting: deterministic judging with the prompt above.
VOXEVAL_JUDGING = ChecklistJudging(
    protocol="voxeval",
    template=CHECKLIST_TEMPLATE,
    general_checklist=GENERAL_CHECKLIST,
    temperature=0.0,
    max_tokens=1024,
)


def checklist_judging(
    protocol: JudgeProtocol = "voxeval", prompt_file: Path | None = None
) -> ChecklistJudging:
    """The checklist judge's setting for ``scoring.judge_protocol`` and ``judge_prompt``."""
    if protocol == "reference":
        return reference_judging(prompt_file)
    if prompt_file is None:
        return VOXEVAL_JUDGING
    return ChecklistJudging(
        protocol="voxeval",
        template=template_from_file(prompt_file),
        general_checklist=GENERAL_CHECKLIST,
        temperature=VOXEVAL_JUDGING.temperature,
        max_tokens=VOXEVAL_JUDGING.max_tokens,
        prompt_file=str(prompt_file),
    )


def checklist_items(
    items: Iterable[str] | None, general: tuple[str, ...] = GENERAL_CHECKLIST
) -> list[str]:
    """The general checklist followed by the query's own points (blank ones dropped)."""
    specific = [str(x).strip() for x in (items or ()) if str(x).strip()]
    return [*general, *specific]


def format_checklist(
    items: Iterable[str] | None, general: tuple[str, ...] = GENERAL_CHECKLIST
) -> str:
    lines = [f"- {x}" for x in checklist_items(items, general)]
    if not any(str(x).strip() for x in (items or ())):
        lines.append(f"- {NO_CHECKLIST}")
    return "\n".join(lines)


def _language_gate(
    record: ReplyRecord, resources: ScoringResources
) -> tuple[Score | None, dict[str, JSONReadValue]]:
    """(the minimum score, when the reply is off-language; the language details). Without an
    identifier the judge grades as usual and the details say the check did not run."""
    if record.reply_audio is None or record.reply_audio.is_empty():
        return None, {"language_check": "not run: the reply has no audio"}
    try:
        verdict = resources.reply_language(record)
    except ProviderUnavailable as exc:
        return None, {"language_check": f"not run: {exc}"}
    info: dict[str, JSONReadValue] = {"language_check": "ran", "language": verdict.details()}
    if verdict.in_expected_language:
        return None, info
    reason = verdict.reason()
    details = {
        **info,
        "reason": f"{reason}: scored the minimum without a judge call",
        "checklist": checklist_items(record.checklist),
        "judge_calls": 0,
        "parse_failures": 0,
    }
    return Score(value=float(CHECKLIST_TEMPLATE.min_score), details=details), info


@metric(
    "checklist",
    better="higher",
    failure=FailureValue(1.0, None, "the minimum of the 1-10 judge scale"),
    protocols=("single_turn",),
)
def checklist_score(record: ReplyRecord, resources: ScoringResources) -> Score:
    # ProviderUnavailable -> not run with the reason; an endpoint still failing after its
    # retries (EndpointError) -> pending, retried by the next run or score (see run_metric)
    judge = resources.judge()
    judging = resources.checklist_judging or VOXEVAL_JUDGING
    off_language, language_info = _language_gate(record, resources)
    if off_language is not None:
        return off_language
    transcripts = resources.transcripts(record)
    checklist = format_checklist(record.checklist, judging.general_checklist)
    values: list[float] = []
    per_transcript: list[dict[str, Any]] = []
    calls = failures = prompt_tokens = completion_tokens = 0
    http = RequestCounts()  # what the judge calls sent (a cached answer sends nothing)
    cost: float | None = None
    for i, text in enumerate(transcripts.texts):
        reply = text or "(silence)"
        result = judge.grade(
            judging.template,
            {"query": record.query, "reply": reply, "response": reply, "checklist": checklist},
            seed=record.seed * 100 + i * 10,
        )
        calls += result.attempts
        http.add(**result.http.as_dict())
        failures += result.parse_failures
        prompt_tokens += result.prompt_tokens
        completion_tokens += result.completion_tokens
        if result.cost_usd is not None:
            cost = (cost or 0.0) + result.cost_usd
        if result.value is not None:
            values.append(result.value)
        per_transcript.append(
            {"score": result.value, "attempts": result.attempts, "error": result.error,
             "raw": list(result.raw)}
        )  # fmt: skip
    details: dict[str, Any] = {
        "scores": [p["score"] for p in per_transcript],
        "per_transcript": per_transcript,
        "judge_calls": calls,
        "judge_requests": http.requests,
        "judge_retries": http.retries,
        "judge_timeouts": http.timeouts,
        "parse_failures": failures,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "cost_usd": cost,
        "transcripts_rejected": transcripts.rejected,
        # fewer than k means the repetition filter dropped some transcripts: the mean is
        # over fewer samples than configured (flagged, counted in the summary)
        "transcripts_used": len(values),
        "k": transcripts.settings.k,
        "judge": judge.identity(),
        "judge_setting": judging.describe(),
        "checklist": checklist_items(record.checklist, judging.general_checklist),
        **language_info,
    }
    unread = [i for i, p in enumerate(per_transcript) if p["score"] is None]
    if unread:
        # A fault on our side (the judge), not a property of the reply: pending, so that the
        # next ``score`` or resumed run asks again. A mean over the transcripts it did read
        # would be a different statistic than the k-sample mean configured.
        first = per_transcript[unread[0]]["error"] or "no answer"
        return Score.pending_retry(
            f"checklist: the judge gave no readable score for transcript(s) "
            f"{', '.join(str(i + 1) for i in unread)} of {len(per_transcript)}: {first}",
            **details,
        )
    if not values:
        return Score.not_run("there was no transcript to judge", **details)
    return Score(value=mean(values), details=details)
