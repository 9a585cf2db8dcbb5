"""Honest labels (issue 38, point 9): calls record whose settings decided the agent's turn
timing, and the report marks the metrics voxeval's turn adapter decided for a turn-based
system, with the settings beside them."""

from __future__ import annotations

from pathlib import Path

from tests.simulation.parties import ListAgent, ListCaller
from tests.simulation.test_cut_marks import Quitter
from tests.simulation.test_duplex import call
from voxeval.protocols.adapter_timing import adapter_timing
from voxeval.report.document import system_blocks
from voxeval.report.markdown import block_markdown
from voxeval.simulation.engine import EngineSettings
from voxeval.simulation.recorder import record_call


def test_calls_record_the_adapters_settings_and_the_summary_names_its_metrics(
    tmp_path: Path,
) -> None:
    settings = EngineSettings(barge_in_s=0.5, min_interruption_words=1)
    adapted = call(ListCaller("hi", []), ListAgent([]), settings=settings)
    handling = adapted.details["turn_handling"]
    assert handling["adapter"] is True and handling["vad"] == "energy"
    assert handling["barge_in_ms"] == 500 and handling["min_interruption_words"] == 1
    assert handling["eot_silence_ms"] == 700
    streaming = call(ListCaller("hi", []), Quitter(), max_duration_s=3.0)
    assert streaming.details["turn_handling"] == {"adapter": False}

    record_call(adapted, tmp_path / "a")
    record_call(streaming, tmp_path / "b")
    assert adapter_timing([tmp_path / "b"]) is None  # the agent decided its own timing
    timing = adapter_timing([tmp_path / "a", tmp_path / "b"])
    assert timing is not None and timing["calls"] == 1 and timing["calls_recorded"] == 2
    assert timing["settings"]["barge_in_ms"] == 500
    assert timing["metrics"]["yield_latency"] == ["barge_in_ms", "min_interruption_words", "vad"]
    assert "backchannel_yield_rate" in timing["metrics"]
    assert "false_end_of_turn_rate" in timing["metrics"]

    stat = {"mean": 420.0, "ci_low": 400.0, "ci_high": 440.0, "n": 3}
    entry = {
        "overall": {"yield_latency": stat, "task_completion": {**stat, "mean": 1.0}},
        "adapter_timing": timing,
    }
    text = "\n".join(line for b in system_blocks("ref", entry) for line in block_markdown(b))
    assert "yield_latency [adapter]" in text and "task_completion [adapter]" not in text
    assert "Timing set by the turn adapter" in text
    assert "barge_in_ms 500, min_interruption_words 1, vad energy" in text
    plain = "\n".join(
        line
        for b in system_blocks("rt", {"overall": entry["overall"]})
        for line in block_markdown(b)
    )
    assert "[adapter]" not in plain
