"""Live audio agents pass their listening settings to ``LiveAudioAgent`` once, each with its
own defaults."""

from __future__ import annotations

from voxeval.systems.live.pipecat_system import PipecatAgent
from voxeval.systems.live.webrtc_system import WebRTCAgent


def test_webrtc_takes_the_base_defaults_and_overrides() -> None:
    agent = WebRTCAgent("http://127.0.0.1:9/api/offer")
    assert (agent.greeting_wait_s, agent.reply_gap_s, agent.turn_timeout_s) == (2.0, 0.4, 60.0)
    assert (agent.expected_reply_s, agent.yield_window_s) == (3.0, 1.0)
    assert agent.level == 10 ** (-45.0 / 20)
    tuned = WebRTCAgent("http://127.0.0.1:9/api/offer", reply_gap_ms=250.0, yield_window_s=0.5)
    assert (tuned.reply_gap_s, tuned.yield_window_s, tuned.greeting_wait_s) == (0.25, 0.5, 2.0)


def test_a_pipeline_waits_longer_unless_told_otherwise() -> None:
    agent = PipecatAgent("tests.systems.pipecat_bot:build")
    assert (agent.greeting_wait_s, agent.reply_gap_s, agent.turn_timeout_s) == (3.0, 0.6, 60.0)
    tuned = PipecatAgent("tests.systems.pipecat_bot:build", greeting_wait_s=1.0, clock="virtual")
    assert (tuned.greeting_wait_s, tuned.reply_gap_s, tuned.clock) == (1.0, 0.6, "virtual")
