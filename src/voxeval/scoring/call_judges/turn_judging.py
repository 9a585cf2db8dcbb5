"""One judge call per turn: the machinery the audio-judged speech-fidelity metrics share.

Each turn is graded on its own (its audio clip and a prompt about that turn only) with the
``Judge`` machinery, so every answer is JSON validated against the template's schema and a
malformed one is retried and counted. The calls' bookkeeping is summed over the turns. A turn
whose judge never answered in format after its attempts leaves the whole metric *pending* (a
fault on our side, retried by the next ``run``/``score``): grading stops there, since the
retry grades every turn again."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from voxeval.audio import Audio
from voxeval.errors import ProviderUnavailable
from voxeval.json_types import JSONObject, JSONReadValue
from voxeval.scoring.call_judges.judged_call import RatedTemplate
from voxeval.scoring.judge import Judge, JudgeResult, JudgeVariables, summed_accounting
from voxeval.scoring.replies.reply_record import ScoringResources
from voxeval.scoring.score import Score


@dataclass(frozen=True)
class TurnRequest:
    """What the judge gets for one turn: the template's variables and the turn's audio."""

    turn: int
    variables: JudgeVariables
    audio: Audio


@dataclass(frozen=True)
class TurnAnswers:
    """The validated answer of every graded turn, in order, and the summed bookkeeping."""

    answers: dict[int, JSONObject]
    bookkeeping: dict[str, JSONReadValue]


def audio_judge_of(resources: ScoringResources) -> Judge:
    """The resources' audio judge; ``ProviderUnavailable`` (the metric is not run, with the
    reason) when there is none or when it would not hear the audio."""
    judge = resources.audio_judge()  # ProviderUnavailable (NO_AUDIO_JUDGE) when there is none
    if judge.modality != "audio":
        raise ProviderUnavailable("the audio judge must hear audio (a Judge with modality='audio')")
    return judge


def judge_each_turn(
    judge: Judge, template: RatedTemplate, requests: Sequence[TurnRequest]
) -> TurnAnswers | Score:
    """Grade every request in order; the pending score when a turn got no answer in format."""
    results: list[JudgeResult] = []
    answers: dict[int, JSONObject] = {}
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
