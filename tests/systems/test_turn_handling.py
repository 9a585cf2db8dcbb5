"""Turn handling of turn-based agents: end of turn with patience, barge-in, backchannels,
history of what the caller heard; the streaming VADs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from tests.simulation.helpers import scenario, write_suite
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.config import SystemSpec
from voxeval.providers import create_provider
from voxeval.simulation.caller_behaviour import ScheduledBehaviour
from voxeval.simulation.engine import run_call
from voxeval.simulation.latency import ComponentLatency, LatencyModel
from voxeval.simulation.parties import CallerBase, CallerTurn
from voxeval.systems.base import Turn
from voxeval.systems.call import AgentTurn, CallAgentBase, LineBlock, Reply, StopSpeaking
from voxeval.systems.cascade import CascadeAgent, CascadeSystem
from voxeval.systems.turn_call import TurnSystemCall
from voxeval.systems.turn_handling import (
    EnergyFrameVAD,
    TurnPolicy,
    TurnTakingAdapter,
    as_streaming,
    words_spoken,
)

FRAME = 320  # 20 ms at 16 kHz


class Recorder(CallAgentBase):
    name = "recorder"

    def __init__(self) -> None:
        self.calls: list[str | None] = []
        self.heard: list[str] = []

    def start(self, scenario: Any, tools: Any) -> AgentTurn | None:
        return None

    def respond(self, user_audio: Any, user_text: Any) -> AgentTurn:
        self.calls.append(user_text)
        return AgentTurn("reply")

    def heard_by_caller(self, text: str) -> None:
        self.heard.append(text)


def text_block(start: int, pattern: str, playing: bool = False, words: dict | None = None):  # type: ignore[no-untyped-def]
    """Frames from a pattern: '#' caller speech, '.' silence."""
    flags = np.array([c == "#" for c in pattern])
    return LineBlock(start, len(pattern), FRAME, 16000, None, flags, words or {}, playing)


def test_end_of_turn_waits_for_silence_plus_patience() -> None:
    for patience, expected in ((0, 10 + 35 - 1), (400, 10 + 55 - 1)):
        agent = Recorder()
        adapter = TurnTakingAdapter(agent, TurnPolicy(patience_ms=patience))
        # speech in frames 0-9, then silence: after 0.7 s (+ patience) of it, it answers
        action = adapter.hear(text_block(0, "#" * 10 + "." * 100, words={9: "hello there"}))
        assert isinstance(action, Reply) and action.frame == expected
        turn = action.produce()
        assert turn is not None and agent.calls == ["hello there"]


def test_a_pause_shorter_than_the_end_of_turn_silence_keeps_the_turn_open() -> None:
    agent = Recorder()
    adapter = TurnTakingAdapter(agent, TurnPolicy(patience_ms=800))  # needs 1.5 s = 75 frames
    # speech, a 1.2 s pause (60 frames), more speech: still one turn
    pattern = "#" * 10 + "." * 60 + "#" * 10 + "." * 100
    action = adapter.hear(text_block(0, pattern, words={9: "one two", 79: "three"}))
    assert isinstance(action, Reply) and action.frame == 79 + 75
    action.produce()
    assert agent.calls == ["one two three"]


def test_silent_blocks_are_taken_in_at_once() -> None:
    adapter = TurnTakingAdapter(Recorder())
    assert adapter.hear(text_block(0, "#" * 10, words={9: "hi"})) is None
    silent = LineBlock(10, 1000, FRAME, 16000)
    action = adapter.hear(silent)
    assert isinstance(action, Reply) and action.frame == 10 + 35 - 1


def test_barge_in_stops_the_reply_and_a_backchannel_does_not() -> None:
    agent = Recorder()
    adapter = TurnTakingAdapter(agent, TurnPolicy(barge_in_ms=300))  # 15 frames
    reply = adapter.hear(text_block(0, "#" * 5 + "." * 40, words={4: "hi"}))
    assert isinstance(reply, Reply)
    reply.produce()
    # its reply plays: a 10-frame backchannel goes by, then the caller talks for real
    assert adapter.hear(text_block(100, "." * 10 + "#" * 10 + "." * 20, playing=True)) is None
    stop = adapter.hear(text_block(140, "." * 5 + "#" * 30, playing=True, words={174: "wait"}))
    assert isinstance(stop, StopSpeaking) and stop.frame == 145 + 15 - 1
    adapter.utterance_done("one two three four five six", 0.5)
    assert agent.heard == ["one two three"]  # the history keeps what the caller heard
    action = adapter.hear(text_block(160, "#" * 15 + "." * 40, words={174: "wait"}))
    assert isinstance(action, Reply)
    action.produce()
    assert agent.calls == ["hi", "wait"]  # the backchannel was never answered


def test_an_agent_without_a_barge_in_threshold_never_stops() -> None:
    adapter = TurnTakingAdapter(Recorder(), TurnPolicy(barge_in_ms=None))
    adapter.hear(text_block(0, "#" * 5 + "." * 40))
    assert adapter.hear(text_block(100, "#" * 200, playing=True)) is None


def test_as_streaming_uses_the_agents_own_policy() -> None:
    agent = Recorder()
    agent.turn_policy = TurnPolicy(eot_silence_ms=200)  # type: ignore[attr-defined]
    adapted = as_streaming(agent, TurnPolicy(eot_silence_ms=900))
    assert isinstance(adapted, TurnTakingAdapter) and adapted.policy.eot_silence_ms == 200
    assert as_streaming(adapted) is adapted  # already streaming
    assert words_spoken("one two ... three four", 0.5) == "one two"


def tone(seconds: float, amplitude: float = 0.3) -> np.ndarray:
    t = np.arange(round(seconds * 16000)) / 16000
    return (amplitude * np.sin(2 * np.pi * 300 * t)).astype(np.float32)


def flags(vad: EnergyFrameVAD, samples: np.ndarray) -> list[bool]:
    return [
        vad.is_speech(samples[i : i + FRAME]) for i in range(0, samples.size - FRAME + 1, FRAME)
    ]


def test_energy_vad_follows_the_noise_floor() -> None:
    rng = np.random.default_rng(0)
    noise = (0.01 * rng.standard_normal(16000 * 3)).astype(np.float32)  # -40 dBFS
    line = noise.copy()
    line[16000:32000] += tone(1.0)  # speech 25 dB above the noise, seconds 1-2
    line[8000 : 8000 + FRAME] = 0.0  # a lost packet
    decided = flags(EnergyFrameVAD(), line)
    assert not any(decided[:50]) and all(decided[51:99]) and not any(decided[101:])
    clean = EnergyFrameVAD()
    clean.silence(10, FRAME)
    assert all(flags(clean, tone(0.5)))  # speech straight after an empty line


def test_history_records_what_the_caller_heard() -> None:
    class Echo:
        name = "echo"

        def reply(self, history: Any) -> Any:
            from voxeval.systems.base import Reply as TurnReply

            return TurnReply(audio=None, text="one two three four", timing={}, details={})

    session = TurnSystemCall(Echo())  # type: ignore[arg-type]
    session.respond(None, "hello")
    session.heard_by_caller("one two")
    assert session.history[-1] == Turn(role="assistant", text="one two")


@pytest.mark.models
def test_cascade_options_set_its_turn_handling() -> None:
    spec = SystemSpec(
        name="c", type="cascade", asr=None, tts={"provider": "espeak"},
        llm={"provider": "openai", "base_url": "http://127.0.0.1:9", "model": "m"},
        turn={"eot_silence_ms": 500, "barge_in_ms": 200},
    )  # fmt: skip
    system = CascadeSystem.from_spec(spec)
    session = system.open_call()
    assert session.turn_policy == TurnPolicy(eot_silence_ms=500, barge_in_ms=200)
    assert session.turn_vad() is None  # no speech input: no VAD
    assert system.identity()["turn"]["barge_in_ms"] == 200


def test_a_cascade_cut_short_keeps_only_the_heard_words_in_its_llm_history(
    tmp_path: Path,
) -> None:
    """Text mode: the caller barges in 1 s into the agent's 10-word answer (4 s); the agent
    stops 0.2 s later; its next LLM request carries the 3 words the caller heard (1.2 s)."""
    long_answer = "one two three four five six seven eight nine ten"

    def responder(path: str, body: Any) -> FakeResponse:
        users = sum(1 for m in body["messages"] if m["role"] == "user")
        return chat_text(long_answer if users == 1 else "Okay.")

    suite = load_scenario_suite(write_suite(tmp_path / "suite", [scenario()]))
    scene = suite.scenarios[0]

    class Caller(CallerBase):
        name = "barger"
        behaviour = ScheduledBehaviour(barge_in_at_s=1.0)
        barge_in_after_s = None

        def __init__(self) -> None:
            self.turns = ["wait that is not right", "bye"]

        def start(self, scenario: Any) -> CallerTurn:
            return CallerTurn("I would like to book a visit")

        def respond(self, agent_audio: Any, agent_text: Any) -> CallerTurn:
            text = self.turns.pop(0)
            return CallerTurn(text, end_call=text == "bye")

    with FakeOpenAIServer(responder) as server:
        llm = create_provider("llm", {"provider": "openai", "base_url": server.url, "model": "m"})
        agent = CascadeAgent(llm=llm, turn_policy=TurnPolicy(barge_in_ms=200))
        result = run_call(
            scene, Caller(), agent, ToolRuntime(scene, suite.tools), mode="text", seed=0
        )
        bodies = [r.body for r in server.requests]
    cut = [s for s in result.timeline.speech("assistant") if s.intended_text == long_answer]
    assert cut and cut[0].interrupted
    second = bodies[1]["messages"]
    answer = [m for m in second if m["role"] == "assistant" and "one two" in str(m["content"])]
    assert answer and answer[-1]["content"] == "one two three"
    assert "four" not in json.dumps(second)


@pytest.mark.models
def test_silero_streams_speech_decisions_frame_by_frame() -> None:
    from voxeval.providers.voices.speech_renderer import SpeechRenderer
    from voxeval.simulation.bus import to_rate
    from voxeval.systems.turn_handling import frame_vad_from

    speech = to_rate(SpeechRenderer("piper:joe")("Hello, I would like to book a visit.")).samples
    line = np.concatenate([np.zeros(8000, np.float32), speech, np.zeros(16000, np.float32)])
    vad = frame_vad_from(create_provider("vad", "silero"))
    decided = np.array(
        [vad.is_speech(line[i : i + FRAME]) for i in range(0, line.size - FRAME + 1, FRAME)]
    )
    head, tail = decided[:20], decided[-30:]  # 0.4 s before, the last 0.6 s after
    body = decided[25 : 25 + speech.size // FRAME - 10]
    assert not head.any() and not tail.any()
    assert body.mean() > 0.7


@pytest.mark.models
@pytest.mark.slow
def test_a_spoken_cascade_stops_for_a_barge_in_and_remembers_what_was_heard(
    tmp_path: Path,
) -> None:
    """Audio mode, Piper voices, Whisper tiny ASR, streaming Silero VAD: the caller cuts in
    1 s into the cascade's long answer; the cascade stops within its 300 ms threshold (plus
    Silero's reaction) and its next LLM request holds only the start of that answer."""
    from voxeval.providers.voices.speech_renderer import SpeechRenderer

    long_answer = (
        "Certainly. We have many openings this week on Monday Tuesday Wednesday Thursday and "
        "Friday in the morning and in the afternoon."
    )

    def responder(path: str, body: Any) -> FakeResponse:
        users = sum(1 for m in body["messages"] if m["role"] == "user")
        return chat_text(long_answer if users == 1 else "Okay, Friday it is.")

    suite = load_scenario_suite(write_suite(tmp_path / "suite", [scenario()]))
    scene = suite.scenarios[0]

    class Caller(CallerBase):
        name = "barger"
        behaviour = ScheduledBehaviour(barge_in_at_s=1.0)
        barge_in_after_s = None

        def __init__(self) -> None:
            self.turns = ["Friday please", "Thanks, goodbye."]

        def start(self, scenario: Any) -> CallerTurn:
            return CallerTurn("I would like to book a visit.")

        def respond(self, agent_audio: Any, agent_text: Any) -> CallerTurn:
            text = self.turns.pop(0)
            return CallerTurn(text, end_call=text.startswith("Thanks"))

    voice = SpeechRenderer("piper:joe")
    with FakeOpenAIServer(responder) as server:
        llm = create_provider("llm", {"provider": "openai", "base_url": server.url, "model": "m"})
        agent = CascadeAgent(
            llm=llm,
            asr=create_provider("asr", "whisper-tiny-en"),
            tts=voice,
            vad=create_provider("vad", "silero"),
            turn_policy=TurnPolicy(barge_in_ms=300),
        )
        result = run_call(
            scene,
            Caller(),
            agent,
            ToolRuntime(scene, suite.tools),
            mode="audio",
            caller_voice=voice,
            agent_voice=voice,
            latency_model=LatencyModel(agent=ComponentLatency(kind="fixed", ms=500)),
        )
        bodies = [r.body for r in server.requests]
    cut = [s for s in result.timeline.speech("assistant") if s.intended_text == long_answer]
    barge = [s for s in result.timeline.speech("user") if s.intended_text == "Friday please"]
    assert cut and barge and cut[0].interrupted
    assert 0.3 <= cut[0].end - barge[0].start <= 0.8  # its own threshold, Silero's delay
    kept = [m["content"] for m in bodies[1]["messages"] if m["role"] == "assistant"]
    assert kept and kept[-1].startswith("Certainly.") and "afternoon" not in kept[-1]
