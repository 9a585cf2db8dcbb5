"""Bootstrap intervals of online Elo: the point is the online Elo in judging order (or
FastChat's median of the bootstrap), rounds resample dialogues and replay them in the order
drawn, and sweeps are unbounded."""

from __future__ import annotations

import numpy as np
import pytest

from tests.analysis.arena_battles import battle, simulated_tournament
from voxeval.analysis.ratings.battles import Battle
from voxeval.analysis.ratings.elo import expected_score, online_elo, replay_elo
from voxeval.analysis.ratings.elo_intervals import elo_intervals


def _after(sequence: list[str]) -> float:
    """A's online Elo after the dialogues in ``sequence`` ('w': A wins, 'l': A loses)."""
    a = b = 1000.0
    for outcome in sequence:
        e = expected_score(a, b)
        s = 1.0 if outcome == "w" else 0.0
        a, b = a + 4 * (s - e), b - 4 * (s - e)
    return a


def test_two_dialogues_golden() -> None:
    # d1: A wins, d2: B wins. A round draws 2 of 2 dialogues: ww, wl, lw or ll (1/4 each),
    # so the 95% interval runs from A's Elo after ll to A's Elo after ww
    battles = [battle("A", "B", "a", "d1", order=0), battle("A", "B", "b", "d2", order=1)]
    report = elo_intervals(battles, n_resamples=400, seed=3)
    a = report["systems"]["A"]
    assert a["rating"] == pytest.approx(online_elo(battles)["A"]) == pytest.approx(_after("wl"))
    assert a["ci_low"] == pytest.approx(_after("ll"))
    assert a["ci_high"] == pytest.approx(_after("ww"))
    assert (a["rank"], a["rank_low"], a["rank_high"]) == (1, 1, 2)
    assert report["point"] == "final" and report["order"] == "judging"
    median = elo_intervals(battles, n_resamples=400, seed=3, point="median")["systems"]["A"]
    assert _after("wl") <= median["rating"] <= _after("lw")
    assert elo_intervals(battles, n_resamples=400, seed=3) == report  # seeded


def test_point_follows_the_judging_order_not_the_item_names() -> None:
    # judged: d2 (B wins) first, then d1 (A wins); names would put d1 first
    battles = [battle("A", "B", "a", "d1", order=1), battle("A", "B", "b", "d2", order=0)]
    a = elo_intervals(battles, n_resamples=50)["systems"]["A"]["rating"]
    assert a == pytest.approx(_after("lw"))
    assert a != pytest.approx(_after("wl"))


def _fastchat_bootstrap(battles: list[Battle], rounds: int, seed: int) -> np.ndarray:
    """FastChat's procedure: sample the battles with replacement (which also shuffles their
    order), replay online Elo, collect; here one battle per dialogue, so it is ours too."""
    rng = np.random.default_rng(seed)
    names = sorted({b.system_a for b in battles} | {b.system_b for b in battles})
    rows = []
    for _ in range(rounds):
        drawn = [battles[i] for i in rng.integers(0, len(battles), len(battles))]
        ratings = replay_elo(drawn)
        rows.append([ratings.get(n, np.nan) for n in names])
    return np.array(rows)


def test_agrees_with_fastchats_bootstrap_within_resampling_noise() -> None:
    battles = simulated_tournament({"x": 0.0, "y": 0.6, "z": 1.2}, items=100, seed=5)
    battles = [
        Battle(b.system_a, b.system_b, b.winner, f"{b.item_id}-{i}", b.dimension, i)
        for i, b in enumerate(battles)
    ]  # one battle per dialogue
    ours = elo_intervals(battles, n_resamples=600, seed=1, point="median")["systems"]
    theirs = _fastchat_bootstrap(battles, 600, seed=2)
    for column, name in enumerate(["x", "y", "z"]):
        low, median, high = np.quantile(theirs[:, column], [0.025, 0.5, 0.975])
        assert ours[name]["rating"] == pytest.approx(median, abs=2.0)
        width = ours[name]["ci_high"] - ours[name]["ci_low"]
        assert width == pytest.approx(high - low, rel=0.15)


def test_a_sweep_has_an_open_interval() -> None:
    battles = [battle("A", "B", "a", f"d{i}", order=i) for i in range(6)]
    report = elo_intervals(battles, n_resamples=100)
    for name in ("A", "B"):
        entry = report["systems"][name]
        assert entry["unbounded"] is not None
        assert entry["ci_low"] is None and (entry["rank_low"], entry["rank_high"]) == (1, 2)
    assert report["systems"]["A"]["rating"] == pytest.approx(online_elo(battles)["A"])


def test_one_dialogue_has_no_interval() -> None:
    report = elo_intervals([battle("A", "B", "tie", "d1")], n_resamples=10)
    assert report["ci_note"].startswith("fewer than two compared items")
    assert report["systems"]["A"]["ci_low"] is None and report["resamples"] == 0
