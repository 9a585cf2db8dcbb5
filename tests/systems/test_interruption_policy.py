"""The interruption policy of adapted agents (issue 38, point 2): a minimum interruption
duration and a minimum number of words that are not backchannel words, as LiveKit Agents
(``min_interruption_duration`` / ``min_interruption_words``) and Pipecat (minimum-words
strategy) configure deployed agents."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.systems.test_turn_handling import Recorder, text_block
from voxeval.audio import Audio
from voxeval.simulation.simulation_config import parse_simulation
from voxeval.systems.call import LineBlock, Reply, StopSpeaking
from voxeval.systems.turn_handling import TurnPolicy, TurnTakingAdapter, interruption_words

FRAME = 320


def replying(adapter: TurnTakingAdapter) -> None:
    """The caller says "hi" and the agent takes the turn (its reply then plays)."""
    reply = adapter.hear(text_block(0, "#" * 5 + "." * 40, words={4: "hi"}))
    assert isinstance(reply, Reply)
    reply.produce()


def test_backchannel_words_do_not_count() -> None:
    assert interruption_words("Mm-hmm.") == 0
    assert interruption_words("uh-huh, right, okay yeah") == 0
    assert interruption_words("Ajá, sí, vale") == 0
    assert interruption_words("Look, okay.") == 1
    assert interruption_words("wait, that's the wrong date") == 5


def test_a_long_backchannel_does_not_stop_the_reply_but_words_do() -> None:
    agent = Recorder()
    adapter = TurnTakingAdapter(agent, TurnPolicy(barge_in_ms=500, min_interruption_words=1))
    replying(adapter)
    # a 0.8 s "mm-hm" (40 frames) while the reply plays: longer than 500 ms, no word
    block = text_block(100, "#" * 40 + "." * 20, playing=True, words={139: "mm-hm"})
    assert adapter.hear(block) is None
    # "okay mm-hm wait": 500 ms reached at frame 160 + 24, but the first word that is not a
    # backchannel ends at frame 189
    words = {169: "okay", 179: "mm-hm", 189: "wait"}
    stop = adapter.hear(text_block(160, "#" * 60, playing=True, words=words))
    assert isinstance(stop, StopSpeaking) and stop.frame == 189
    # the same speech with duration alone (the old rule) stops at 500 ms
    duration_only = TurnTakingAdapter(Recorder(), TurnPolicy(barge_in_ms=500))
    replying(duration_only)
    stop = duration_only.hear(text_block(100, "#" * 40 + "." * 20, playing=True))
    assert isinstance(stop, StopSpeaking) and stop.frame == 100 + 25 - 1


def test_audio_mode_counts_words_with_the_asr_every_200_ms() -> None:
    heard: list[float] = []

    def transcribe(audio: Audio) -> str:
        heard.append(round(audio.duration, 2))
        return "mm-hm" if audio.duration < 1.0 else "mm-hm no wait"

    policy = TurnPolicy(barge_in_ms=500, min_interruption_words=1)
    adapter = TurnTakingAdapter(Recorder(), policy, Loud(), transcribe)
    speech = np.full(FRAME * 5, 0.1, np.float32)
    silence = np.zeros(FRAME * 40, np.float32)
    first = LineBlock(0, 45, FRAME, 16000, np.concatenate([speech, silence]))
    reply = adapter.hear(first)
    assert isinstance(reply, Reply)
    reply.produce()
    talk = LineBlock(100, 100, FRAME, 16000, np.full(FRAME * 100, 0.1, np.float32), playing=True)
    stop = adapter.hear(talk)
    # checks at 500, 700, 900 ms of speech (+100 ms of line before it): 1 word at 1.0 s
    assert isinstance(stop, StopSpeaking) and stop.frame == 100 + 45 - 1
    assert heard == [0.6, 0.8, 1.0] and adapter.word_checks == 3


class Loud:
    """Every frame with sound is speech (the VAD is not under test here)."""

    def is_speech(self, frame: Any) -> bool:
        return bool(np.abs(frame).max() > 0)

    def silence(self, frames: int, frame_len: int) -> None:
        return None


def test_words_in_audio_mode_need_an_asr() -> None:
    adapter = TurnTakingAdapter(Recorder(), TurnPolicy(min_interruption_words=1), Loud())
    samples = np.zeros(FRAME * 45, np.float32)
    samples[: FRAME * 5] = 0.1
    reply = adapter.hear(LineBlock(0, 45, FRAME, 16000, samples))
    assert isinstance(reply, Reply)
    reply.produce()
    talk = LineBlock(100, 50, FRAME, 16000, np.full(FRAME * 50, 0.1, np.float32), playing=True)
    with pytest.raises(ValueError, match="min_interruption_words=1 needs an ASR"):
        adapter.hear(talk)


def test_run_defaults_follow_deployed_agents() -> None:
    sim = parse_simulation({})
    policy = sim.engine_settings().turn_policy()
    assert policy.barge_in_ms == 500 and policy.min_interruption_words == 1
    assert sim.interruption_asr.provider == "whisper-tiny-en"
    assert parse_simulation({"language": "es"}).interruption_asr.provider == "whisper-base"
    assert parse_simulation({"min_interruption_words": 0}).word_counter(None) is None
    assert parse_simulation({"mode": "text"}).word_counter(None) is None
