"""Interruptions that carry meaning: a caller that cuts in with a corrected date of birth, an
agent that uses the correction (1) and one that ignores it (0), scored offline (the entity in
the next utterance or tool call) and by a loopback judge; and the scripted caller really
slipping and cutting in with the correction in a call."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from voxeval.benchmarks.eva.clinic_calls import CLINIC_CALLS_PATH
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.scoring.call_judges.interruption_uptake import (
    interruption_uptake,
    interruption_uptake_judge,
)
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.judge import Judge
from voxeval.simulation.callers.interruptions import misstated
from voxeval.simulation.callers.scripted_caller import ScriptedCaller
from voxeval.simulation.engine import run_call
from voxeval.simulation.latency import ComponentLatency, LatencyModel
from voxeval.simulation.personas import Persona
from voxeval.simulation.timeline import SpeakerSegment, Timeline, ToolEvent
from voxeval.systems.scripted import ScriptedAgent

SUITE = load_scenario_suite(CLINIC_CALLS_PATH)
SCENARIO = SUITE.get("clinic-s09-refill")
RIGHT, WRONG = "1988-03-03", "1988-03-04"
CORRECTION = f"Sorry, wait, I gave you the wrong date of birth. It's {RIGHT}."


def corrected_call(dob_used: str) -> Timeline:
    """The caller gave a wrong date of birth, then cut into the agent's next question with
    the right one; the agent then verifies with ``dob_used`` and says so."""
    return Timeline(
        segments=[
            SpeakerSegment("assistant", 0.0, 3.0, 0, "What is your member ID and date of birth?"),
            SpeakerSegment("user", 3.5, 7.0, 0, f"My member ID is FY2-9K3M, born {WRONG}."),
            SpeakerSegment(
                "assistant", 7.5, 9.0, 1, "Thanks. And your last name?", interrupted=True
            ),
            SpeakerSegment("user", 8.8, 11.0, 1, CORRECTION),
            SpeakerSegment("assistant", 11.8, 14.0, 2, f"Thank you, verified with {dob_used}."),
        ],
        tools=[
            ToolEvent(11.6, 2, "verify_patient",
                      {"member_id": "FY2-9K3M", "date_of_birth": dob_used}, {}),
        ],
    )  # fmt: skip


def record(timeline: Timeline) -> LiveCallRecord:
    return LiveCallRecord(timeline=timeline, scenario=SCENARIO)


def test_offline_check_scores_the_correction_taken_up_1_and_ignored_0() -> None:
    used = interruption_uptake(record(corrected_call(RIGHT)))
    ignored = interruption_uptake(record(corrected_call(WRONG)))
    assert used.value == 1.0 and used.passed
    assert ignored.value == 0.0 and not ignored.passed
    (item,) = ignored.details["interruptions"]
    assert item["entities"] == [RIGHT] and item["missed"] == [RIGHT]
    assert item["tool_calls"] == ["verify_patient"] and item["took_turn"] is True
    assert item["latency_s"] == pytest.approx(0.8)  # 11.0 -> 11.8
    assert ignored.details["failed"] == [0]


def test_no_barge_in_or_no_entity_is_not_run() -> None:
    plain = Timeline(segments=[SpeakerSegment("assistant", 0.0, 2.0, 0, "Hello.")])
    assert interruption_uptake(record(plain)).value is None
    filler = corrected_call(RIGHT)
    filler.segments[3] = SpeakerSegment("user", 8.8, 9.4, 1, "Look, okay.")
    score = interruption_uptake(record(filler))
    assert score.value is None and "key entity" in (score.error or str(score.details))


class LoopbackJudge:
    """Reads the case back from the prompt: took_up when the right date is in what the agent
    said or did next (what a careful judge would answer)."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def __call__(self, path: str, body: dict[str, Any]) -> FakeResponse:
        prompt = body["messages"][-1]["content"]
        self.prompts.append(prompt)
        after = prompt.split("agent next said:", 1)[1]
        took = int(RIGHT in after)
        verdict = {"interruption": 0, "took_up": took, "relevance": 5 if took else 1}
        answer = {"interruptions": [{**verdict, "reason": "read back"}]}
        return chat_text(json.dumps(answer))


class Resources:
    def __init__(self, judge: Judge) -> None:
        self._judge = judge

    def judge(self) -> Judge:
        return self._judge


def test_judge_variant_scores_the_correction_taken_up_1_and_ignored_0() -> None:
    loopback = LoopbackJudge()
    with FakeOpenAIServer(loopback) as server:
        from voxeval.providers.factory import create_provider

        llm = create_provider(
            "llm", {"provider": "openai", "base_url": server.url, "model": "judge"}
        )
        judge = Judge(llm)
        used = interruption_uptake_judge(record(corrected_call(RIGHT)), Resources(judge))
        ignored = interruption_uptake_judge(record(corrected_call(WRONG)), Resources(judge))
    assert used.value == 1.0 and ignored.value == 0.0
    assert ignored.details["interruptions"][0]["relevance"] == 1
    assert used.details["mean_relevance"] == 5
    prompt = loopback.prompts[0]
    assert f"caller cut in: {CORRECTION}" in prompt
    assert "agent, cut off: Thanks. And your last name?" in prompt
    assert '"date_of_birth": "1988-03-03"' in prompt  # the tool call is shown


def test_scripted_caller_slips_and_cuts_in_with_the_correction() -> None:
    assert misstated(RIGHT) == WRONG and misstated("FY2-9K3M") == "FY2-9K4M"
    assert misstated("Okonkwo-Price") is None
    # slips once; never barges in by chance; no backchannels (one would stop the agent first:
    # issue 38 point 2), so the correction is the only thing that cuts in
    persona = Persona(
        "slipping", "", slip_rate=1.0, barge_in_rate=0.01, barge_in_min_s=60.0,
        interruption_content_rate=1.0, backchannel_rate=0.0,
    )  # fmt: skip
    caller = ScriptedCaller(persona=persona, seed=3)
    tools = ToolRuntime(SCENARIO, SUITE.tools)
    result = run_call(
        SCENARIO, caller, ScriptedAgent(), tools, mode="text", seed=3,
        latency_model=LatencyModel(agent=ComponentLatency(kind="fixed", ms=600)),
    )  # fmt: skip
    slip = caller.interruptions.slip_label
    assert slip is not None
    said = [s.intended_text for s in result.timeline.speech("user")]
    right = SCENARIO.entities[slip]
    wrong = misstated(right)
    assert any(wrong in t for t in said)  # first the slip ...
    corrections = [t for t in said if "gave you the wrong" in t]
    assert corrections and right in corrections[0]  # ... then the correction, cutting in
    score = interruption_uptake(LiveCallRecord(timeline=result.timeline, scenario=SCENARIO))
    assert score.value == 1.0, score.details  # the listening reference agent takes it up
    assert result.timeline.tools[0].arguments.get("date_of_birth", right) != wrong
