"""Whose fault a broken call is: the agent's (the system under test: the call ends, recorded
with a cause) or ours (caller, renderers: ``HarnessFault`` out of ``run_call``)."""

from __future__ import annotations

from typing import Any

import httpx
import numpy as np
import pytest

from tests.simulation.parties import ListAgent, ListCaller, NoTools, tone_voice
from voxeval.audio import Audio
from voxeval.errors import ConfigError, HarnessFault
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.turn_taking import turn_taking
from voxeval.simulation.engine import run_call
from voxeval.simulation.latency import ComponentLatency, LatencyModel
from voxeval.simulation.parties import AgentTurn, CallerTurn

FIXED = LatencyModel(agent=ComponentLatency(kind="fixed", ms=800))


def call(caller: Any, agent: Any, mode: str = "text", **kw: Any) -> Any:
    if mode == "audio":
        kw.setdefault("caller_voice", tone_voice)
        kw.setdefault("agent_voice", tone_voice)
    return run_call(None, caller, agent, NoTools(), mode=mode, latency_model=FIXED, **kw)  # type: ignore[arg-type]


class FailingAgent(ListAgent):
    def __init__(self, exc: Exception, at: int = 1) -> None:
        super().__init__(["first answer", "second answer"])
        self.exc, self.at = exc, at

    def respond(self, user_audio: Any, user_text: Any) -> AgentTurn:
        if len(self.heard) == self.at:
            raise self.exc
        return super().respond(user_audio, user_text)


@pytest.mark.parametrize(
    ("exc", "reason", "cause"),
    [
        (RuntimeError("backend crashed"), "agent_error", "exception"),
        (ConnectionResetError("peer reset"), "agent_error", "disconnect"),
        (httpx.ReadTimeout("no answer"), "agent_timeout", "timeout"),
    ],
)
def test_an_agent_that_raises_is_a_system_fault(exc: Exception, reason: str, cause: str) -> None:
    closed: list[bool] = []
    agent = FailingAgent(exc)
    agent.close = lambda: closed.append(True)  # type: ignore[attr-defined]
    result = call(ListCaller("i need help", ["and then"]), agent)
    assert result.end_reason == reason
    assert result.system_fault is not None and result.system_fault.cause == cause
    assert result.error is not None and result.error.startswith("agent list-agent:")
    assert closed == [True]
    # the second user turn (turn 2 after the greeting's turn 0) was never answered: a timeout
    # zeroes turn-taking (the reference's rule); an agent_error only with the opt-in setting
    score = turn_taking(LiveCallRecord(timeline=result.timeline))
    assert score.details["missed_turn"] is (reason == "agent_timeout")
    opted = LiveCallRecord(timeline=result.timeline, turn_taking_zero_on_agent_error=True)
    score = turn_taking(opted)
    assert score.value == 0.0 and score.details["timeouts"] == [2]


def test_a_silent_agent_is_a_timeout_of_the_system() -> None:
    agent = ListAgent(["x"], silent_at=0)
    result = call(ListCaller("i need help", []), agent, agent_timeout_s=5)
    assert result.end_reason == "agent_timeout"
    assert result.system_fault is not None and result.system_fault.cause == "timeout"
    assert "no answer within 5 s" in str(result.system_fault)


def test_a_clean_call_has_no_fault() -> None:
    result = call(ListCaller("i need help", []), ListAgent(["a b c"]))
    assert result.system_fault is None and result.error is None


class BrokenCaller(ListCaller):
    def respond(self, agent_audio: Any, agent_text: Any) -> CallerTurn:
        raise ValueError("caller LLM returned nothing")


def test_a_caller_failure_is_ours() -> None:
    with pytest.raises(HarnessFault) as info:
        call(BrokenCaller("i need help", ["more"]), ListAgent(["a b c"]))
    assert info.value.component == "simulator"
    assert "caller LLM returned nothing" in str(info.value)


def broken_voice(text: str) -> Audio:
    raise OSError("piper crashed")


def test_a_renderer_failure_is_ours() -> None:
    with pytest.raises(HarnessFault) as info:
        call(
            ListCaller("i need help", []), ListAgent(["a b c"]), "audio", caller_voice=broken_voice
        )
    assert info.value.component == "renderer"
    with pytest.raises(HarnessFault) as info:  # the agent's text, rendered by our TTS
        call(ListCaller("i need help", []), ListAgent(["a b c"]), "audio", agent_voice=broken_voice)
    assert info.value.component == "renderer"


def quiet(text: str) -> Audio:
    return Audio(np.zeros(16000, np.float32), 16000)


def test_a_caller_turn_without_speech_is_ours() -> None:
    with pytest.raises(HarnessFault) as info:
        call(ListCaller("i need help", []), ListAgent(["a b c"]), "audio", caller_voice=quiet)
    assert info.value.component == "renderer"


class SetupProblemAgent(ListAgent):
    def respond(self, user_audio: Any, user_text: Any) -> AgentTurn:
        raise ConfigError("agent x: api_key_env OPENAI_API_KEY is not set")


def test_a_setup_problem_of_the_agent_is_not_scored_as_its_failure() -> None:
    with pytest.raises(ConfigError):
        call(ListCaller("i need help", []), SetupProblemAgent(["a"]))
