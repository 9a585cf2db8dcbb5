"""How fast the call engine simulates: a five-minute call between two instant scripted parties.

Both parties answer at once with fixed lines; in audio mode their "voice" is a cheap synthetic
signal (so the figure measures the engine — the full-duplex line in 20 ms frames, the agent's
streaming voice activity and end-of-turn detection, barge-in handling, the bus — not a TTS
model). Prints simulated seconds per wall second for text and audio mode and the fixed
per-call overhead; the last line is the audio-mode figure (about 1,500 on a laptop core).

    python bench/sim_speed.py
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from voxeval.audio import Audio
from voxeval.simulation.engine import run_call
from voxeval.simulation.latency import ComponentLatency, LatencyModel
from voxeval.simulation.parties import AgentTurn, CallerBase, CallerTurn
from voxeval.systems.call import CallAgentBase

TARGET_S = 300.0
LATENCY = LatencyModel(agent=ComponentLatency(kind="fixed", ms=900))


def voice(text: str) -> Audio:
    """Speech-like signal: 0.35 s voiced bursts per word with short gaps, plus edge padding."""
    rate = 16000
    t = np.arange(int(0.35 * rate)) / rate
    word = (0.3 * np.sin(2 * np.pi * 180 * t) * np.hanning(t.size)).astype(np.float32)
    gap = np.zeros(int(0.08 * rate), np.float32)
    pad = np.zeros(int(0.2 * rate), np.float32)
    parts = [pad] + [x for _ in text.split() for x in (word, gap)] + [pad]
    return Audio(np.concatenate(parts), rate)


class InstantAgent(CallAgentBase):
    name = "instant-agent"

    def start(self, scenario: Any, tools: Any) -> AgentTurn:
        return AgentTurn("Thank you for calling, how can I help you today?")

    def respond(self, user_audio: Audio | None, user_text: str | None) -> AgentTurn:
        return AgentTurn("I understand. Could you tell me a little more about that, please?")


class InstantCaller(CallerBase):
    name = "instant-caller"

    def __init__(self, turns: int) -> None:
        self.turns = turns

    def start(self, scenario: Any) -> CallerTurn:
        return CallerTurn("Hello, I am calling about my appointment next week.")

    def respond(self, agent_audio: Audio | None, agent_text: str | None) -> CallerTurn:
        self.turns -= 1
        if self.turns <= 0:
            return CallerTurn("Thanks, goodbye.", end_call=True)
        return CallerTurn("Yes, it is about the time, I would like something in the morning.")


class NoTools:
    def __init__(self) -> None:
        self.db: dict[str, Any] = {}
        self.session: dict[str, Any] = {}

    def final_state(self) -> dict[str, Any]:
        return {}


def five_minute_call(mode: str) -> tuple[float, float]:
    """(simulated seconds, wall seconds) of a call that lasts at least five minutes."""
    turns = 10
    while True:
        start = time.perf_counter()
        kwargs: dict[str, Any] = (
            {"caller_voice": voice, "agent_voice": voice} if mode == "audio" else {}
        )
        result = run_call(
            None,
            InstantCaller(turns),
            InstantAgent(),
            NoTools(),
            mode=mode,  # type: ignore[arg-type]
            latency_model=LATENCY,
            **kwargs,
        )
        wall = time.perf_counter() - start
        if result.duration_s >= TARGET_S:
            return result.duration_s, wall
        turns = int(turns * TARGET_S / result.duration_s) + 1


def overhead(repeats: int = 50) -> float:
    """Mean wall seconds of a one-exchange text-mode call (fixed cost per call)."""
    start = time.perf_counter()
    for _ in range(repeats):
        run_call(
            None,
            InstantCaller(1),
            InstantAgent(),
            NoTools(),
            mode="text",  # type: ignore[arg-type]
            latency_model=LATENCY,
        )
    return (time.perf_counter() - start) / repeats


def main() -> None:
    text_sim, text_wall = five_minute_call("text")
    audio_sim, audio_wall = five_minute_call("audio")
    print(
        f"text mode:  {text_sim:.1f} simulated s in {text_wall:.3f} wall s "
        f"({text_sim / text_wall:.0f} x real time)"
    )
    print(
        f"audio mode: {audio_sim:.1f} simulated s in {audio_wall:.3f} wall s "
        f"({audio_sim / audio_wall:.0f} x real time)"
    )
    print(f"per-call overhead (one-exchange text call): {overhead() * 1000:.2f} ms")
    print(f"simulated_seconds_per_wall_second: {audio_sim / audio_wall:.1f}")


if __name__ == "__main__":
    main()
