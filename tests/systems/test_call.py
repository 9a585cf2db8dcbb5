"""The call-agent contract (``systems.call``): every optional member has its default on
``CallAgentBase``, an agent's own value is the one the engine and the turn adapter use, and a
wrapper passes the ``streaming`` flag on."""

from __future__ import annotations

from typing import Any

from tests.simulation.parties import ListAgent, ListCaller, NoTools
from voxeval.providers.usage.usage_ledger import AttributedProvider
from voxeval.simulation.engine import run_call
from voxeval.systems.call import (
    AgentAction,
    AgentTurn,
    CallAgent,
    CallAgentBase,
    LineBlock,
    StreamingCallAgent,
    is_streaming,
)
from voxeval.systems.turn_handling import (
    EnergyFrameVAD,
    TurnPolicy,
    TurnTakingAdapter,
    as_streaming,
)
from voxeval.systems.turn_policy import FrameVAD


class Plain(CallAgentBase):
    name = "plain"

    def start(self, scenario: Any, tools: Any) -> AgentTurn | None:
        return None

    def respond(self, user_audio: Any, user_text: str | None) -> AgentTurn:
        return AgentTurn("ok")


class Listener(Plain):
    """A streaming agent (it never takes the turn)."""

    streaming = True

    def hear(self, block: LineBlock) -> AgentAction | None:
        return None

    def utterance_done(self, text: str, spoken_fraction: float) -> None:
        return None


OWN_VAD = EnergyFrameVAD(margin_db=6.0)


class Tuned(Plain):
    """A turn agent that overrides every optional member."""

    clock = "wall"
    reports_latency = True
    compute_takes_call_time_on_virtual_clock = False
    turn_policy = TurnPolicy(eot_silence_ms=300.0, barge_in_ms=None)

    def __init__(self) -> None:
        self.heard: list[str] = []
        self.closed = 0

    def turn_vad(self) -> FrameVAD | None:
        return OWN_VAD

    def heard_by_caller(self, text: str) -> None:
        self.heard.append(text)

    def close(self) -> None:
        self.closed += 1


def test_the_base_gives_every_optional_member_its_default() -> None:
    agent = Plain()
    assert agent.streaming is False
    assert agent.clock == "virtual"
    assert agent.reports_latency is False
    assert agent.compute_takes_call_time_on_virtual_clock is True
    assert agent.turn_policy is None
    assert agent.turn_vad() is None
    assert agent.heard_by_caller("words") is None
    assert agent.take_transcripts() == []
    assert agent.close() is None
    assert isinstance(agent, CallAgent)
    assert isinstance(Listener(), StreamingCallAgent)


def test_a_turn_agent_without_settings_gets_the_runs_turn_handling() -> None:
    run_policy, run_vad = TurnPolicy(eot_silence_ms=900.0), EnergyFrameVAD()
    adapted = as_streaming(Plain(), run_policy, run_vad)
    assert isinstance(adapted, TurnTakingAdapter)
    assert adapted.policy == run_policy and adapted.vad is run_vad


def test_a_turn_agents_own_policy_and_vad_are_used() -> None:
    adapted = as_streaming(Tuned(), TurnPolicy(eot_silence_ms=900.0), EnergyFrameVAD())
    assert isinstance(adapted, TurnTakingAdapter)
    assert adapted.policy.eot_silence_ms == 300.0 and adapted.policy.barge_in_ms is None
    assert adapted.vad is OWN_VAD
    assert adapted.describe()["eot_silence_ms"] == 300.0


def test_the_adapter_passes_on_the_wrapped_agents_settings() -> None:
    tuned, plain = TurnTakingAdapter(Tuned()), TurnTakingAdapter(Plain())
    assert (tuned.clock, tuned.reports_latency) == ("wall", True)
    assert tuned.compute_takes_call_time_on_virtual_clock is False
    assert (plain.clock, plain.reports_latency) == ("virtual", False)
    assert plain.compute_takes_call_time_on_virtual_clock is True
    assert tuned.streaming is True and tuned.take_transcripts() == []


def test_a_cut_reply_reaches_the_agents_heard_by_caller_and_close_is_passed_on() -> None:
    agent = Tuned()
    adapter = TurnTakingAdapter(agent)
    adapter.utterance_done("one two three four", 0.5)
    adapter.utterance_done("all of it", 1.0)  # played whole: nothing to correct
    adapter.close()
    assert agent.heard == ["one two"] and agent.closed == 1


def test_streaming_is_the_declared_flag_and_passes_through_a_wrapper() -> None:
    listener = Listener()
    assert is_streaming(listener) and not is_streaming(Plain())
    assert as_streaming(listener) is listener
    wrapped = AttributedProvider(listener, "agent", ("start",))
    assert is_streaming(wrapped)  # type: ignore[arg-type]
    assert as_streaming(wrapped) is wrapped  # type: ignore[arg-type]
    turn = AttributedProvider(Plain(), "agent", ("start", "respond"))
    assert isinstance(as_streaming(turn), TurnTakingAdapter)  # type: ignore[arg-type]


class Reporting(ListAgent):
    """The list agent, remote-like: it reports its latency and is closed once."""

    reports_latency = True
    compute_takes_call_time_on_virtual_clock = False

    def __init__(self, lines: list[str]) -> None:
        super().__init__(lines)
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


def test_the_engine_reads_the_agents_declared_members() -> None:
    default = run_call(None, ListCaller("hi", []), ListAgent([]), NoTools(), mode="text")  # type: ignore[arg-type]
    latency = default.details["latency"]
    assert isinstance(latency, dict)
    assert latency["clock"] == "virtual" and latency["measured_by"] == "voxeval"
    assert latency["agent_compute_in_latency"] is True

    agent = Reporting([])
    result = run_call(None, ListCaller("hi", []), agent, NoTools(), mode="text")  # type: ignore[arg-type]
    latency = result.details["latency"]
    assert isinstance(latency, dict)
    assert latency["measured_by"] == "agent"
    assert latency["agent_compute_in_latency"] is False
    assert agent.closed == 1
    assert result.details["turn_handling"] == default.details["turn_handling"]
