from __future__ import annotations

import json

import pytest

from tests.analysis.arena_battles import battle, simulated_tournament
from voxeval.analysis.ratings.arena_summary import arena_summary
from voxeval.analysis.ratings.battles import Battle
from voxeval.analysis.ratings.bradley_terry import bradley_terry
from voxeval.analysis.ratings.elo import online_elo
from voxeval.analysis.ratings.elo_intervals import elo_intervals


def test_summary_of_one_dimension_is_json_ready() -> None:
    battles = simulated_tournament({"x": 0.0, "y": 0.5, "z": 1.0}, items=10, seed=4, tie_rate=0.2)
    summary = arena_summary(battles, n_resamples=80, seed=2, anchor="x")
    assert json.loads(json.dumps(summary)) == summary
    assert summary["dimension"] == "semantic" and summary["n_battles"] == 30
    assert summary["ties"] == sum(1 for b in battles if b.winner == "tie") > 0
    assert summary["elo"] == online_elo(battles)
    assert summary["bt"] == bradley_terry(battles, n_resamples=80, seed=2, anchor="x")
    row = summary["bt"]["systems"]["z"]
    assert set(row) == {
        "rating", "ci_low", "ci_high", "rank", "rank_low", "rank_high", "battles", "unbounded"
    }  # fmt: skip
    assert summary["elo_intervals"] == elo_intervals(battles, n_resamples=80, seed=2)
    assert summary["style_controlled"]["features_dropped"]  # the tournament has no style data
    assert summary["win_matrix"]["x"]["y"]["n"] == 10


def test_disconnected_and_empty_battles_leave_a_note() -> None:
    disconnected = [battle("A", "B", "a", "d1"), battle("C", "D", "b", "d2")]
    summary = arena_summary(disconnected, n_resamples=10)
    assert summary["style_controlled"] is None
    assert "unlinked groups" in summary["ratings_note"]
    assert "every rating is unbounded" in summary["ratings_note"]
    # regression: the systems used to vanish from BT; now every one is there, unbounded
    assert set(summary["bt"]["systems"]) == {"A", "B", "C", "D"}
    assert summary["bt"]["unbounded"] == ["A", "B", "C", "D"]
    elo = summary["elo_intervals"]["systems"]
    assert all(entry["unbounded"] and entry["ci_low"] is None for entry in elo.values())
    assert summary["elo"]["A"] == pytest.approx(1002.0)
    empty = arena_summary([])
    assert (empty["n_battles"], empty["bt"], empty["ratings_note"]) == (0, None, "no battles")


def test_mixed_dimensions_are_refused() -> None:
    mixed = [battle("A", "B", "a"), Battle("A", "B", "a", "d2", "ambient")]
    with pytest.raises(ValueError, match="several dimensions"):
        arena_summary(mixed)
