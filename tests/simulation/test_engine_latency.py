"""A text-only agent is charged its own compute plus the declared rendering model, never our
synthesiser's wall time; audio-producing and modelled agents are recorded as such."""

import time

import pytest

from tests.simulation.parties import ListAgent, ListCaller, NoTools, tone_voice
from voxeval.audio import Audio
from voxeval.simulation.engine import run_call
from voxeval.simulation.latency import ComponentLatency, LatencyModel, RenderingLatency
from voxeval.simulation.parties import AgentTurn

COMPUTE_S = 0.5  # the agent's declared own compute per reply
RENDERING = RenderingLatency(first_audio_ms=250, per_char_ms=10)
SLOW_RENDER_S = 0.6  # our renderer's wall time, which must not reach the agent's latency


class FixedComputeAgent(ListAgent):
    """A scripted text-only agent whose every reply reports a fixed compute time."""

    def respond(self, user_audio, user_text):  # type: ignore[no-untyped-def]
        turn = super().respond(user_audio, user_text)
        return AgentTurn(turn.text, end_call=turn.end_call, compute_s=COMPUTE_S)


class SpeakingAgent(FixedComputeAgent):
    """The same agent producing its own audio (speech-to-speech)."""

    def respond(self, user_audio, user_text):  # type: ignore[no-untyped-def]
        turn = super().respond(user_audio, user_text)
        text = turn.text or ""
        return AgentTurn(text, audio=tone_voice(text), end_call=turn.end_call, compute_s=COMPUTE_S)


def slow_voice(text: str) -> Audio:
    """Our agent renderer, deliberately slow (as Piper on a loaded machine)."""
    time.sleep(SLOW_RENDER_S)
    return tone_voice(text)


def reply_after_caller(result):  # type: ignore[no-untyped-def]
    """Seconds from the end of the caller's first turn to the agent's reply."""
    caller_end = result.timeline.speech("user")[0].end
    reply = next(s for s in result.timeline.speech("assistant") if s.start > caller_end)
    return reply.start - caller_end


def test_text_only_agent_gets_declared_rendering_not_our_wall_time() -> None:
    agent = FixedComputeAgent(["a b c"], greeting=None)  # "a b c": 5 characters
    result = run_call(
        None,
        ListCaller("i need help", []),
        agent,
        NoTools(),
        mode="audio",
        caller_voice=tone_voice,
        agent_voice=slow_voice,
        settings=None,
        rendering_latency=RENDERING,
    )
    latency = result.details["latency"]
    assert latency["agent"] == "measured" and latency["measured_by"] == "voxeval"
    first = latency["turns"][0]
    # own compute: the declared 0.5 s plus the scripted respond() itself (microseconds)
    assert first["agent_s"] == pytest.approx(COMPUTE_S, abs=0.05)
    assert first["rendering_s"] == pytest.approx(0.25 + 0.010 * 5)
    assert first["rendered_by_voxeval"] is True
    assert latency["rendering_by_voxeval"]["model"] == {"first_audio_ms": 250, "per_char_ms": 10}
    # on the line: end-of-turn silence (0.7 s) + compute + rendering, in 20 ms frames; the
    # renderer's 0.6 s of wall time is nowhere
    gap = reply_after_caller(result)
    assert gap == pytest.approx(0.7 + COMPUTE_S + 0.3, abs=0.05)
    assert gap < 0.7 + COMPUTE_S + SLOW_RENDER_S


def test_audio_producing_agent_is_charged_its_own_time_only() -> None:
    result = run_call(
        None,
        ListCaller("i need help", []),
        SpeakingAgent(["a b c"], greeting=None),
        NoTools(),
        mode="audio",
        caller_voice=tone_voice,
        agent_voice=slow_voice,  # never used: the agent speaks itself
        rendering_latency=RENDERING,
    )
    latency = result.details["latency"]
    assert [t["rendering_s"] for t in latency["turns"]] == [0.0]
    assert latency["rendering_by_voxeval"] is None
    assert reply_after_caller(result) == pytest.approx(0.7 + COMPUTE_S, abs=0.05)


def test_modelled_agent_latency_is_the_whole_response_and_says_so() -> None:
    result = run_call(
        None,
        ListCaller("i need help", []),
        ListAgent(["a b c"], greeting=None),
        NoTools(),
        mode="audio",
        caller_voice=tone_voice,
        agent_voice=tone_voice,
        latency_model=LatencyModel(agent=ComponentLatency(kind="fixed", ms=800)),
        rendering_latency=RENDERING,
    )
    latency = result.details["latency"]
    assert latency["agent"] == "modelled"
    assert latency["rendering_by_voxeval"] is None
    assert [t["agent_s"] for t in latency["turns"]] == [0.8]
    assert reply_after_caller(result) == pytest.approx(0.7 + 0.8)


def test_component_compute_is_summed_for_the_overhead_figure() -> None:
    result = run_call(
        None,
        ListCaller("i need help", []),
        ListAgent(["a b c"]),
        NoTools(),
        mode="audio",
        caller_voice=tone_voice,
        agent_voice=slow_voice,
    )
    # two agent renderings (greeting and reply) ran in the lane and were counted
    assert result.details["compute_s"] >= 2 * SLOW_RENDER_S
    assert result.details["compute_s"] <= result.wall_s
