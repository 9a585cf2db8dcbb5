"""The offline speech-fidelity checks on real spoken calls (Piper TTS, embedded Whisper tiny):
a clean call passes both; an entity planted by changing the text before TTS is caught."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.simulation.helpers import scenario, write_suite
from voxeval.benchmarks.eva.scenario import Scenario, ScenarioSuite, load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.protocols.live_call import RecordedTracks
from voxeval.providers import create_provider
from voxeval.providers.voices.speech_renderer import SpeechRenderer
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.metric_runner import run_metric
from voxeval.scoring.replies.reply_record import ScoringResources
from voxeval.simulation.engine import run_call
from voxeval.simulation.latency import ComponentLatency, LatencyModel
from voxeval.simulation.parties import AgentTurn, CallerBase, CallerTurn
from voxeval.simulation.recorder import record_call
from voxeval.systems.call import CallAgentBase

pytestmark = pytest.mark.models

CALLER_SAYS = "My member ID is K X 4 9 2 B 7."
AGENT_SAYS = "Thank you. Your confirmation code is R 7 7 4 1, and the fee is $45.50."


class OneLineCaller(CallerBase):
    """Says its member ID, then hangs up; ``spoken`` replaces what its audio says."""

    name = "id-caller"

    def __init__(self, voice: SpeechRenderer, spoken: str | None = None) -> None:
        self.voice, self.spoken = voice, spoken

    def start(self, scenario: Scenario) -> CallerTurn:
        audio = self.voice(self.spoken) if self.spoken else None
        return CallerTurn(CALLER_SAYS, audio=audio)

    def respond(self, agent_audio: Any, agent_text: Any) -> CallerTurn:
        return CallerTurn("Thanks, bye.", end_call=True)


class OneLineAgent(CallAgentBase):
    """Greets, answers with a code and an amount; ``spoken`` replaces what its audio says."""

    name = "code-agent"

    def __init__(self, voice: SpeechRenderer, spoken: str | None = None) -> None:
        self.voice, self.spoken = voice, spoken

    def start(self, scenario: Scenario, tools: Any) -> AgentTurn:
        return AgentTurn("Hello, clinic line.")

    def respond(self, user_audio: Any, user_text: Any) -> AgentTurn:
        audio = self.voice(self.spoken) if self.spoken else None
        return AgentTurn(AGENT_SAYS, audio=audio)


@pytest.fixture(scope="module")
def asr() -> Any:
    return create_provider("asr", "whisper-tiny-en")


@pytest.fixture(scope="module")
def voice() -> SpeechRenderer:
    return SpeechRenderer("piper:joe")


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> ScenarioSuite:
    data = scenario()
    data["user_goal"]["information_required"] = {"member_id": "KX492B7"}
    return load_scenario_suite(write_suite(tmp_path_factory.mktemp("suite"), [data]))


@pytest.fixture(scope="module")
def call_scenario(suite: ScenarioSuite) -> Scenario:
    return suite.scenarios[0]


def _call(suite: ScenarioSuite, caller: Any, agent: Any, voice: SpeechRenderer) -> Any:
    scen = suite.scenarios[0]
    result = run_call(
        scen,
        caller,
        agent,
        ToolRuntime(scen, suite.tools),
        mode="audio",
        caller_voice=voice,
        agent_voice=voice,
        latency_model=LatencyModel(agent=ComponentLatency(kind="fixed", ms=800)),
        seed=1,
    )
    assert result.end_reason == "user_end_call", result.error
    return result


@pytest.mark.slow
def test_a_clean_spoken_call_passes_both_checks(
    tmp_path: Path, suite: ScenarioSuite, call_scenario: Scenario, asr: Any, voice: SpeechRenderer
) -> None:
    result = _call(suite, OneLineCaller(voice), OneLineAgent(voice), voice)
    record_call(result, tmp_path)  # scored from the recorded files, as the protocol does
    record = LiveCallRecord(
        timeline=result.timeline, scenario=call_scenario, tracks=RecordedTracks(tmp_path)
    )
    resources = ScoringResources(asr=lambda: asr)
    agent = run_metric("agent_speech_fidelity_asr", record, resources)
    assert (agent.value, agent.passed) == (1.0, True), agent.details
    assert agent.details["turns"][0]["entities"] == ["R 7 7 4 1", "$45.50"]
    user = run_metric("user_speech_fidelity_asr", record, resources)
    assert (user.value, user.passed, user.details["regenerate"]) == (1.0, True, False)
    assert user.details["turns"][0]["entities"] == ["KX492B7"]


@pytest.mark.slow
def test_planted_mispronounced_entities_are_caught_and_named(
    suite: ScenarioSuite, call_scenario: Scenario, asr: Any, voice: SpeechRenderer
) -> None:
    caller = OneLineCaller(voice, spoken=CALLER_SAYS.replace("2 B", "3 B"))
    agent = OneLineAgent(voice, spoken=AGENT_SAYS.replace("R 7 7 4 1", "R 7 7 4 9"))
    result = _call(suite, caller, agent, voice)
    record = LiveCallRecord(
        timeline=result.timeline,
        scenario=call_scenario,
        tracks={"user": result.user_track, "assistant": result.assistant_track},
    )
    resources = ScoringResources(asr=lambda: asr)
    agent_score = run_metric("agent_speech_fidelity_asr", record, resources)
    assert (agent_score.value, agent_score.passed) == (0.0, False)
    assert agent_score.details["turns"][0]["missed"] == ["R 7 7 4 1"]  # the fee was right
    user = run_metric("user_speech_fidelity_asr", record, resources)
    assert (user.value, user.passed, user.details["regenerate"]) == (0.0, False, True)
    assert user.details["turns"][0]["missed"] == ["KX492B7"]
