"""One judge call over a whole live call: the skeletons the judged call metrics share.
``judge_conversation`` (faithfulness, conversation progression) judges the conversation once;
``judge_agent_turns`` (conciseness, speakability) has it answered turn by turn. The metric
keeps its own prompt, rating rule and score; this finds the conversation (and the turns),
binds the rule and runs the judge."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from voxeval.json_types import JSONObject
from voxeval.scoring.call_judges.call_conversation import CallConversation, call_conversation
from voxeval.scoring.call_judges.judged_call import RatedTemplate, run_judge, turn_items
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.judge import Judge, JudgeVariables
from voxeval.scoring.judge_answer import as_int
from voxeval.scoring.score import Score

TurnsRater = Callable[[JSONObject, list[int]], float]
"""(answer, the agent turns it must rate) -> the call's value."""
TurnsScorer = Callable[[list[int], float, JSONObject], Score]
"""(the agent turns, the value, the answer) -> the score with its per-turn details."""


def turn_field_rater(field: str, combine: Callable[[Iterable[int]], float]) -> TurnsRater:
    """A rater that reads each expected turn's whole-number ``field`` and ``combine``s them
    into the call's value (every expected turn answered exactly once)."""

    def rate(answer: JSONObject, expected: list[int]) -> float:
        items = turn_items(answer, expected)
        return combine(as_int(items[t][field], field) for t in expected)

    return rate


def judge_conversation(
    record: LiveCallRecord,
    judge: Judge,
    template: RatedTemplate,
    build: Callable[[float, JSONObject], Score],
    variables: Callable[[CallConversation], JudgeVariables],
    refusal: Callable[[CallConversation], str | None],
) -> Score:
    """One judge call over the whole call: not run without a timeline, or with the reason
    ``refusal`` gives for this conversation (None: judge it)."""
    conv = call_conversation(record)
    if conv is None:
        return Score.not_run("the call left no timeline to judge")
    reason = refusal(conv)
    if reason is not None:
        return Score.not_run(reason)
    return run_judge(judge, template, variables(conv), build, conv.facts())


def judge_agent_turns(
    record: LiveCallRecord,
    judge: Judge,
    template: RatedTemplate,
    rate: TurnsRater,
    build: TurnsScorer,
    variables: Callable[[CallConversation], JudgeVariables],
    no_turns: str,
) -> Score:
    """Not run without a timeline, or with ``no_turns`` when the agent never spoke."""
    conv = call_conversation(record)
    if conv is None:
        return Score.not_run("the call left no timeline to judge")
    expected = list(conv.agent_turns)
    if not expected:
        return Score.not_run(no_turns)
    bound = replace(template, rate=lambda answer: rate(answer, expected))
    return run_judge(
        judge,
        bound,
        variables(conv),
        lambda value, answer: build(expected, value, answer),
        conv.facts(),
    )
