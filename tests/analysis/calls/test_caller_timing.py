"""The caller's timing against human conversation: offsets, pauses and backchannels on a
constructed timeline (figures worked out by hand), the persona's drawn response gaps, the
engine using them, and `voxeval analyze timing` on a real text-mode run."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from tests.simulation.helpers import scenario, write_suite
from voxeval.analysis.calls.caller_timing import caller_timing, modal_value, pooled, timing_summary
from voxeval.benchmarks.eva.scenario import Scenario
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.benchmarks.tools.tool_spec import load_tool_specs
from voxeval.cli.main import app
from voxeval.simulation.callers.scripted_caller import ScriptedCaller
from voxeval.simulation.engine import EngineSettings, run_call
from voxeval.simulation.latency import ComponentLatency, LatencyModel
from voxeval.simulation.personas import GAP_RANGE_S, get_persona, response_gap
from voxeval.simulation.timeline import SpeakerSegment, Timeline
from voxeval.systems.scripted import ScriptedAgent


def seg(speaker: str, start: float, end: float, turn: int, **flags: bool) -> SpeakerSegment:
    return SpeakerSegment(speaker, start, end, turn, intended_text="x", **flags)  # type: ignore[arg-type]


def constructed() -> Timeline:
    return Timeline(
        segments=[
            seg("assistant", 0.0, 2.0, 0),  # greeting
            seg("user", 2.2, 3.0, 0),  # offset +200 ms
            seg("user", 3.5, 4.0, 0),  # same turn after a 500 ms pause
            seg("assistant", 4.8, 10.8, 1),  # 6 s of agent speech
            seg("user", 6.0, 6.3, 1, backchannel=True),  # not a turn
            seg("user", 10.6, 11.5, 1),  # overlap: -200 ms
            seg("user", 12.0, 12.4, 1),  # the same turn after a 500 ms pause
            seg("assistant", 13.0, 17.0, 2),
            seg("user", 17.21, 18.0, 2),  # +210 ms
            seg("user", 20.0, 21.0, 3),  # the agent never answered turn 2: not an offset
        ]
    )


def test_figures_of_a_constructed_timeline() -> None:
    timing = caller_timing(constructed())
    assert timing.response_offsets_s == pytest.approx([0.2, -0.2, 0.21])
    assert timing.pauses_s == pytest.approx([0.5, 0.5])
    assert timing.backchannels == 1
    assert timing.agent_speech_s == pytest.approx(12.0)
    summary = timing_summary(pooled([constructed(), constructed()]))
    offsets = summary["response_offset_s"]
    assert offsets["n"] == 6 and offsets["mean"] == pytest.approx(0.21 / 3)
    assert offsets["median"] == pytest.approx(0.2)
    assert offsets["overlap_share"] == pytest.approx(1 / 3)
    assert offsets["mode"] == pytest.approx(0.225)  # the [200, 250) ms bin holds 4 of 6
    assert summary["pause_s"]["median"] == pytest.approx(0.5)
    assert summary["backchannels_per_min"] == pytest.approx(2 / (24 / 60))  # 5 per minute
    assert summary["in_human_range"] == {
        "offset_mean": True,  # 70 ms within 7-469 ms
        "offset_mode": True,
        "pause_median": True,
        "backchannel_rate": True,
    }


def test_modal_value_and_empty_figures() -> None:
    assert modal_value([0.61, 0.62, 0.1]) == pytest.approx(0.625)
    summary = timing_summary(pooled([]))
    assert summary["response_offset_s"] == {"n": 0, "mode": None}
    assert set(summary["in_human_range"].values()) == {None}


def test_persona_gaps_land_in_the_human_range_unless_slow() -> None:
    rng = np.random.default_rng(0)
    gaps = [response_gap(get_persona(None), rng) for _ in range(4000)]
    assert 0.007 <= float(np.mean(gaps)) <= 0.469
    assert abs((modal_value(gaps) or 0) - 0.2) <= 0.05
    assert min(gaps) >= GAP_RANGE_S[0] and max(gaps) <= GAP_RANGE_S[1]
    slow = [response_gap(get_persona("elderly_slow"), rng) for _ in range(4000)]
    assert float(np.mean(slow)) > 0.469  # slow on purpose: outside the human means


def mini_scenario() -> tuple[Scenario, dict]:  # type: ignore[type-arg]
    from tests.simulation.helpers import TOOLS

    return Scenario.model_validate(scenario()), TOOLS


def test_engine_draws_the_callers_gap_from_its_persona(tmp_path: Path) -> None:
    sc, tools_yaml = mini_scenario()
    path = tmp_path / "tools.yaml"
    path.write_text(yaml.safe_dump(tools_yaml), encoding="utf-8")
    specs = load_tool_specs(path)

    def offsets(gap: float | None, seed: int) -> list[float]:
        result = run_call(
            sc,
            ScriptedCaller(behaviour_kind="none"),
            ScriptedAgent(),
            ToolRuntime(sc, specs),
            mode="text",
            seed=seed,
            settings=EngineSettings(caller_gap_s=gap),
            # a modelled agent latency: times are exact (a measured one moves by microseconds)
            latency_model=LatencyModel(agent=ComponentLatency(kind="fixed", ms=500)),
        )
        return caller_timing(result.timeline).response_offsets_s

    fixed = offsets(0.6, 1)
    assert fixed and all(o == pytest.approx(0.6) for o in fixed)
    drawn = offsets(None, 1)
    assert len(drawn) == len(fixed) and len(set(drawn)) > 1
    assert all(0.0 < o < 3.05 for o in drawn)
    assert offsets(None, 1) == drawn  # same seed, same gaps


def test_analyze_timing_prints_the_distribution_beside_the_human_reference(
    tmp_path: Path,
) -> None:
    suite = write_suite(tmp_path / "suite", [scenario("book-1"), scenario("book-2")])
    config = {
        "suite": str(suite),
        "systems": [{"name": "ref", "type": "scripted"}],
        "trials": 3,
        "seed": 5,
        "simulation": {"caller": "scripted", "mode": "text"},
        "perturbations": [{"name": "persona", "persona": "elderly_slow"}],
    }
    path = tmp_path / "live.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    out = tmp_path / "run"
    runner = CliRunner()
    result = runner.invoke(app, ["run", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    shown = runner.invoke(app, ["analyze", "timing", str(out)])
    assert shown.exit_code == 0, shown.output
    assert "persona default" in shown.output and "persona elderly_slow" in shown.output
    assert "Stivers et al. 2009" in shown.output and "7-469 ms" in shown.output
    data = json.loads((out / "report" / "caller_timing.json").read_text())
    default, slow = data["personas"]["default"], data["personas"]["elderly_slow"]
    assert data["calls"] == 12 and default["calls"] == 6 and slow["calls"] == 6
    assert default["response_offset_s"]["n"] >= 12
    assert default["in_human_range"]["offset_mean"] is True
    assert slow["response_offset_s"]["mean"] > default["response_offset_s"]["mean"]
