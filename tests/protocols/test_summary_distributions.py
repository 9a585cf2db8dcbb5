"""The summary's ``distributions`` entry: MOS histograms from mos scores, latency histograms
on edges shared by the systems, per-turn statistics resampling the independent unit, and the
response latencies of live calls in turn order."""

from __future__ import annotations

from voxeval.protocols.summary_distributions import (
    MAX_TURNS,
    add_distributions,
    latency_histograms,
    mos_histograms,
    response_latencies,
    turn_stats,
)
from voxeval.store.records import ScoreRow


def row(system: str, metric: str, value: float | None, **details: object) -> ScoreRow:
    return ScoreRow(
        item_id="s1", system=system, trial=0, condition="clean", category="c",
        metric=metric, value=value, passed=None, details=details, error=None,
    )  # fmt: skip


def test_mos_histograms_per_system() -> None:
    rows = [row("a", "mos", 3.1), row("a", "mos", 4.9), row("b", "mos", 1.2), row("a", "wer", 0.5)]
    hists = mos_histograms(rows)
    assert set(hists) == {"a", "b"}
    assert hists["a"]["n"] == 2 and hists["a"]["counts"][8] == 1 and hists["a"]["counts"][15] == 1
    assert hists["b"]["counts"][0] == 1


def test_latency_histograms_share_edges_between_systems() -> None:
    hists = latency_histograms(
        {"a": {"total_s": [0.2, 0.4]}, "b": {"total_s": [1.9], "first_audio_s": []}}
    )
    assert hists["a"]["total_s"]["edges"] == hists["b"]["total_s"]["edges"]
    assert hists["a"]["total_s"]["n"] == 2 and hists["a"]["total_s"]["unit"] == "s"
    assert "first_audio_s" not in hists["b"]  # no values: no histogram


def test_turn_stats_resample_units_and_stop_at_max_turns() -> None:
    points = [("d1", 1, 1.0), ("d2", 1, 3.0), ("d1", 2, 2.0), ("d1", MAX_TURNS + 1, 9.0)]
    stats = turn_stats(points, seed=0)
    assert list(stats) == ["T1", "T2"]
    assert stats["T1"]["mean"] == 2.0 and stats["T1"]["clusters"] == 2
    assert stats["T2"]["ci_low"] is None  # one dialogue: no interval


def test_response_latencies_number_answered_turns() -> None:
    rows = [
        row("a", "response_latency", 0.8, per_turn_s=[0.5, 0.7, 1.2]),
        row("a", "turn_taking", 1.0, per_turn_s=[9.0]),
    ]
    assert response_latencies(rows) == {"a": [("s1", 1, 0.5), ("s1", 2, 0.7), ("s1", 3, 1.2)]}


def test_empty_parts_leave_no_entry() -> None:
    entry: dict[str, object] = {}
    add_distributions(entry, mos=None, latency={})
    assert entry == {}
    add_distributions(entry, mos={"n": 1}, latency={})
    assert entry == {"distributions": {"mos": {"n": 1}}}
