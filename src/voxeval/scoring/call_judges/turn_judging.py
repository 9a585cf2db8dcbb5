"""One judge call per turn: the machinery the audio-judged speech-fidelity metrics share.

Each turn is graded on its own (its audio clip and a prompt about that turn only) with the
``Judge`` machinery, so every answer is JSON validated against the template's schema and a
malformed one is retried and counted. The calls' bookkeeping is summed over the turns. A turn
whose judge never answered in format after its attempts leaves the whole metric *pending* (a
fault on our side, retried by the next ``run``/``score``): grading stops there, since the
retry grades every turn again."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from voxeval.audio import Audio
from voxeval.errors import ProviderUnavailable
from voxeval.scoring.call_judges.judged_call import RatedTemplate
from voxeval.scoring.judge import Judge, JudgeResult
from voxeval.scoring.replies.reply_record import NO_AUDIO_JUDGE
from voxeval.scoring.score import Score

# accounting fields (``JudgeResult.accounting``) that add up over calls; cost is summed apart
_COUNTED = (
    "judge_calls",
    "judge_requests",
    "judge_retries",
    "judge_timeouts",
    "parse_failures",
    "prompt_tokens",
    "completion_tokens",
)


@dataclass(frozen=True)
class TurnRequest:
    """What the judge gets for one turn: the template's variables and the turn's audio."""

    turn: int
    variables: dict[str, Any]
    audio: Audio


@dataclass(frozen=True)
class TurnAnswers:
    """The validated answer of every graded turn, in order, and the summed bookkeeping."""

    answers: dict[int, dict[str, Any]]
    bookkeeping: dict[str, Any]


def audio_judge_of(resources: Any) -> Judge:
    """The resources' audio judge; ``ProviderUnavailable`` (the metric is not run, with the
    reason) when there is none or when it would not hear the audio."""
    get = getattr(resources, "audio_judge", None)
    if get is None:
        raise ProviderUnavailable(NO_AUDIO_JUDGE)
    judge = get()
    if getattr(judge, "modality", None) != "audio":
        raise ProviderUnavailable("the audio judge must hear audio (a Judge with modality='audio')")
    return judge


def summed_accounting(results: Iterable[JudgeResult]) -> dict[str, Any]:
    """The judge bookkeeping of several calls added up; ``cost_usd`` stays None when no call
    reported a cost."""
    total: dict[str, Any] = dict.fromkeys(_COUNTED, 0)
    cost: float | None = None
    for result in results:
        accounting = result.accounting()
        for name in _COUNTED:
            total[name] += accounting[name]
        if accounting["cost_usd"] is not None:
            cost = (cost or 0.0) + accounting["cost_usd"]
    total["cost_usd"] = cost
    return total


def judge_each_turn(
    judge: Judge, template: RatedTemplate, requests: Sequence[TurnRequest]
) -> TurnAnswers | Score:
    """Grade every request in order; the pending score when a turn got no answer in format."""
    results: list[JudgeResult] = []
    answers: dict[int, dict[str, Any]] = {}
    for request in requests:
        result = judge.grade(template, request.variables, audio=request.audio)
        results.append(result)
        if result.value is None or not isinstance(result.parsed, dict):
            return Score.pending_retry(
                f"{template.name}: turn {request.turn}: {result.error or 'no answer'}",
                **summed_accounting(results),
                judge=judge.identity(),
                failed_turn=request.turn,
                raw=list(result.raw),
            )
        answers[request.turn] = result.parsed
    return TurnAnswers(answers, {**summed_accounting(results), "judge": judge.identity()})
