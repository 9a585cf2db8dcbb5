"""The live-audio call logic (WebRTC, Pipecat) over a scripted audio link standing for a
remote agent's media: a reply goes on the line as it arrives, and with continuous audio
(WebRTC) a stall in delivery does not split it."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from tests.simulation.helpers import write_suite
from tests.simulation.parties import ListCaller, tone_voice
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.simulation.engine import run_call
from voxeval.systems.live.live_audio_agent import AGENT_RATE, LiveAudioAgent

CHUNK = AGENT_RATE // 50  # 20 ms


@dataclass(frozen=True)
class Item:
    at: float
    event: str
    samples: npt.NDArray[np.float32] | None = None


class ScriptedLink:
    """Delivers (offset, event, samples) at ``t0 + offset`` of real time."""

    def __init__(self, script: list[tuple[float, str, npt.NDArray[np.float32] | None]]) -> None:
        self.script = script
        self.t0: float | None = None

    def start_line(self, t0: float) -> None:
        if self.t0 is None:
            self.t0 = t0

    def put(self, frame: int, samples: npt.NDArray[np.float32] | None) -> None:
        pass

    def next(self, deadline: float) -> Item | None:
        assert self.t0 is not None
        if not self.script:
            time.sleep(max(0.0, deadline - time.monotonic()))
            return None
        offset, event, samples = self.script[0]
        due = self.t0 + offset
        if due > deadline:
            time.sleep(max(0.0, deadline - time.monotonic()))
            return None
        time.sleep(max(0.0, due - time.monotonic()))
        self.script.pop(0)
        return Item(due, event, samples)

    def close(self) -> None:
        pass


class ScriptedAgent(LiveAudioAgent):
    name = "scripted-live"

    def __init__(self, link: ScriptedLink, continuous: bool) -> None:
        super().__init__(greeting_wait_s=1.0, reply_gap_ms=400.0)
        self.continuous_audio = continuous
        self._link = link

    def _open(self, scenario: Any, tools: Any) -> ScriptedLink:
        return self._link


def stalled_greeting() -> list[tuple[float, str, npt.NDArray[np.float32] | None]]:
    """0.9 s of loud audio whose middle 0.3 s is delivered 0.6 s late (a stall, then a
    burst), then quiet audio in real time, then the agent hangs up."""
    t = np.arange(CHUNK) / AGENT_RATE
    loud = (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)
    quiet = np.zeros(CHUNK, np.float32)
    script: list[tuple[float, str, npt.NDArray[np.float32] | None]] = []
    for k in range(45):
        at = 0.02 * k if k < 15 else (0.9 if k < 30 else 0.9 + 0.02 * (k - 30))
        script.append((at, "audio", loud))
    script += [(1.2 + 0.02 * k, "audio", quiet) for k in range(100)]
    return [*script, (3.2, "closed", None)]


@pytest.mark.parametrize("continuous", [True, False], ids=["webrtc-like", "time-gap"])
def test_a_stall_in_continuous_audio_does_not_split_a_reply(
    tmp_path: Path, continuous: bool
) -> None:
    suite = load_scenario_suite(write_suite(tmp_path / "suite"))
    scenario = suite.scenarios[0]
    result = run_call(
        scenario,
        ListCaller("hi", []),
        ScriptedAgent(ScriptedLink(stalled_greeting()), continuous),
        ToolRuntime(scenario, suite.tools),
        caller_voice=tone_voice,
        agent_timeout_s=5.0,
        max_duration_s=10.0,
    )
    assert result.error is None, result.error
    said = result.timeline.speech("assistant")
    if continuous:  # one greeting: all 0.9 s of its audio, joined as sent
        assert len(said) == 1
        assert said[0].end - said[0].start == pytest.approx(0.9, abs=0.03)
    else:  # timed by arrival, the 0.6 s stall ends the first reply
        assert len(said) == 2
        assert said[0].end - said[0].start == pytest.approx(0.3, abs=0.03)
