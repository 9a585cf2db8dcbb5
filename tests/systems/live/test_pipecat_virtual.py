"""A Pipecat pipeline on the virtual clock, without models (tests/systems/pipecat_timed_bot.py):
the pipeline's own timers set its timing, its real compute (in threads) does not, so the call
is the same on every run; on the wall clock the compute shows; a pipeline that stays busy past
``turn_timeout_s`` of real time is the agent's fault."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pipecat")

from tests.simulation.helpers import write_suite
from tests.simulation.parties import ListCaller, tone_voice
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.simulation.engine import CallResult, run_call
from voxeval.systems.live.pipecat_system import PipecatAgent


def timed_call(tmp_path: Path, clock: str, think_s: float = 0.5, **agent: float) -> CallResult:
    suite = load_scenario_suite(write_suite(tmp_path / "suite"))
    scenario = suite.scenarios[0]
    return run_call(
        scenario,
        ListCaller("one two three", []),
        PipecatAgent(
            "tests.systems.pipecat_timed_bot:build",
            options={"wait_s": 0.3, "think_s": think_s},
            greeting_wait_s=0.5,
            clock=clock,
            **agent,  # type: ignore[arg-type]
        ),
        ToolRuntime(scenario, suite.tools),
        caller_voice=tone_voice,
        agent_timeout_s=5.0,
        max_duration_s=20.0,
    )


def test_on_the_virtual_clock_the_pipelines_timers_set_the_timing(tmp_path: Path) -> None:
    runs = [timed_call(tmp_path, "auto") for _ in range(2)]  # no remote service: virtual
    first, second = runs
    assert first.error is None and first.details["latency"]["clock"] == "virtual"
    assert first.details["latency"]["agent_compute_in_latency"] is False
    [turn, _goodbye] = first.timeline.speech("user")
    [reply] = first.timeline.speech("assistant")
    # the bot's 0.3 s timer, plus the 20 ms frame it notices the quiet in and the frame
    # alignment of its reply; its 0.5 s of real "inference" is not on the timeline
    assert 0.3 <= reply.start - turn.end <= 0.36
    assert reply.end - reply.start == pytest.approx(1.0, abs=0.03)
    assert first.timeline.segments == second.timeline.segments
    assert first.assistant_track is not None and second.assistant_track is not None
    assert np.array_equal(first.assistant_track.samples, second.assistant_track.samples)


def test_on_the_wall_clock_the_compute_shows(tmp_path: Path) -> None:
    result = timed_call(tmp_path, "wall")
    assert result.error is None and result.details["latency"]["clock"] == "wall"
    assert result.details["latency"]["agent_compute_in_latency"] is True
    turn = result.timeline.speech("user")[0]
    [reply] = result.timeline.speech("assistant")
    assert reply.start - turn.end >= 0.3 + 0.5


def test_a_pipeline_busy_past_the_turn_timeout_is_the_agents_fault(tmp_path: Path) -> None:
    result = timed_call(tmp_path, "virtual", think_s=3.0, turn_timeout_s=1.0)
    assert result.end_reason == "agent_timeout" and result.system_fault is not None
    assert "stayed busy for 1 s of real time" in str(result.system_fault)
