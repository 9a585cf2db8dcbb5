from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.analysis.arena_battles import battle, simulated_tournament
from voxeval.analysis.ratings.battles import Battle
from voxeval.analysis.ratings.bradley_terry import (
    NOTE_TOO_FEW_ITEMS,
    NOTE_TOO_FEW_ROUNDS,
    RATING_SCALE,
    UNBOUNDED_LOST,
    UNBOUNDED_WON,
    BattleArrays,
    DisconnectedComparisons,
    bradley_terry,
    bradley_terry_strengths,
    disconnected_ratings,
    item_bootstrap_interval,
)

GAP_LN3 = 400 * math.log10(3)  # 190.85 rating points: odds 3:1


def zermelo_strengths(battles: list[Battle], iterations: int = 5000) -> dict[str, float]:
    """Independent reference: Zermelo's / Hunter's MM iteration p_i <- W_i / sum_j n_ij /
    (p_i + p_j), ties as half wins; returned as centred natural-log strengths."""
    names = sorted({b.system_a for b in battles} | {b.system_b for b in battles})
    wins = dict.fromkeys(names, 0.0)
    meetings: dict[tuple[str, str], int] = {}
    for b in battles:
        wins[b.system_a] += b.score_a
        wins[b.system_b] += 1 - b.score_a
        for key in ((b.system_a, b.system_b), (b.system_b, b.system_a)):
            meetings[key] = meetings.get(key, 0) + 1
    p = dict.fromkeys(names, 1.0)
    for _ in range(iterations):
        p = {
            i: wins[i] / sum(n / (p[i] + p[j]) for (k, j), n in meetings.items() if k == i)
            for i in names
        }
        scale = math.exp(sum(math.log(v) for v in p.values()) / len(p))
        p = {i: v / scale for i, v in p.items()}
    return {i: math.log(v) for i, v in p.items()}


def test_two_systems_three_to_one_by_hand() -> None:
    # A beats B three times in four: the MLE odds are 3, theta_A - theta_B = ln 3.
    battles = [battle("A", "B", w, f"d{i}") for i, w in enumerate("aaab")]
    theta = bradley_terry_strengths(battles)
    assert theta["A"] - theta["B"] == pytest.approx(math.log(3), abs=1e-3)
    assert theta["A"] + theta["B"] == pytest.approx(0, abs=1e-9)  # centred by the ridge
    ratings = bradley_terry(battles, n_resamples=50)["systems"]
    assert ratings["A"]["rating"] == pytest.approx(1000 + GAP_LN3 / 2, abs=0.2)
    assert ratings["B"]["rating"] == pytest.approx(1000 - GAP_LN3 / 2, abs=0.2)


def test_ties_count_as_half_wins() -> None:
    # One win and two ties: A has 2 "wins", B has 1 -> odds 2, gap 400 log10 2 = 120.4.
    battles = [battle("A", "B", w, f"d{i}") for i, w in enumerate(["a", "tie", "tie"])]
    theta = bradley_terry_strengths(battles)
    assert theta["A"] - theta["B"] == pytest.approx(math.log(2), abs=1e-3)
    # ... the same as B shown first with the verdicts mirrored
    mirrored = [battle("B", "A", w, f"d{i}") for i, w in enumerate(["b", "tie", "tie"])]
    assert bradley_terry_strengths(mirrored) == pytest.approx(theta, abs=1e-6)


def test_matches_zermelo_iteration_on_a_small_table() -> None:
    rows = [("A", "B", "a")] * 5 + [("A", "B", "b")] * 2 + [("B", "C", "a")] * 4
    rows += [("B", "C", "tie")] * 2 + [("C", "B", "a")] * 1 + [("A", "C", "a")] * 3
    rows += [("C", "A", "a")] * 2 + [("C", "D", "a")] * 2 + [("D", "A", "a")] * 1
    rows += [("D", "B", "b")] * 3 + [("C", "D", "b")] * 1
    battles = [battle(a, b, w, f"d{i}") for i, (a, b, w) in enumerate(rows)]
    ours = bradley_terry_strengths(battles)
    reference = zermelo_strengths(battles)
    assert ours == pytest.approx(reference, abs=2e-3)


def test_anchor_fixes_a_system_at_1000_and_keeps_the_gaps() -> None:
    battles = simulated_tournament({"x": 0.0, "y": 0.8, "z": 1.6}, items=20, seed=3)
    free = bradley_terry(battles, n_resamples=200)["systems"]
    anchored = bradley_terry(battles, anchor="x", n_resamples=200)["systems"]
    assert anchored["x"]["rating"] == 1000.0
    assert (anchored["x"]["ci_low"], anchored["x"]["ci_high"]) == (1000.0, 1000.0)
    for name in "yz":
        gap = free[name]["rating"] - free["x"]["rating"]
        assert anchored[name]["rating"] - 1000 == pytest.approx(gap, abs=1e-6)
    assert sum(s["rating"] for s in free.values()) == pytest.approx(3000, abs=1e-6)
    with pytest.raises(ValueError, match="anchor system 'w'"):
        bradley_terry(battles, anchor="w", n_resamples=10)


def test_disconnected_battles_are_refused() -> None:
    battles = [battle("A", "B", "a", "d1"), battle("C", "D", "a", "d2")]
    with pytest.raises(DisconnectedComparisons, match="A, B; C, D"):
        bradley_terry(battles)


def test_single_item_has_no_interval() -> None:
    report = bradley_terry([battle("A", "B", "a"), battle("A", "B", "b")], n_resamples=50)
    assert report["ci_note"] == NOTE_TOO_FEW_ITEMS and report["resamples"] == 0
    assert report["systems"]["A"]["ci_low"] is None and report["systems"]["A"]["rank"] is None
    assert report["systems"]["A"]["rating"] == pytest.approx(1000.0)


def test_bootstrap_is_seeded() -> None:
    battles = simulated_tournament({"x": 0.0, "y": 0.5, "z": 1.0}, items=15, seed=1)
    first = bradley_terry(battles, n_resamples=100, seed=7)
    assert bradley_terry(battles, n_resamples=100, seed=7) == first
    other = bradley_terry(battles, n_resamples=100, seed=8)
    assert other["systems"]["x"]["ci_low"] != first["systems"]["x"]["ci_low"]


def test_bootstrap_resamples_items_not_battles() -> None:
    # Each dialogue judged four times with one verdict (e.g. both orders, two judges): the
    # information is that of one battle per dialogue, and the interval must say so.
    base = simulated_tournament({"x": 0.0, "y": 0.7}, items=30, seed=5)
    copies = [
        Battle(b.system_a, b.system_b, b.winner, f"{b.item_id}:{k}" if split else b.item_id)
        for split in (False, True)
        for b in base
        for k in range(4)
    ]
    clustered = bradley_terry(copies[: len(base) * 4], n_resamples=300)["systems"]["y"]
    naive = bradley_terry(copies[len(base) * 4 :], n_resamples=300)["systems"]["y"]
    assert clustered["rating"] == pytest.approx(naive["rating"])
    width = clustered["ci_high"] - clustered["ci_low"]
    assert width > 1.6 * (naive["ci_high"] - naive["ci_low"])  # about 2x (sqrt 4)


def test_recovers_order_and_rank_intervals_separate_far_systems() -> None:
    truth = {"w": -1.0, "x": 0.0, "y": 0.3, "z": 1.5}
    battles = simulated_tournament(truth, items=120, seed=11, tie_rate=0.1)
    report = bradley_terry(battles, n_resamples=300)
    systems = report["systems"]
    assert sorted(systems, key=lambda s: systems[s]["rating"]) == ["w", "x", "y", "z"]
    assert (systems["z"]["rank"], systems["z"]["rank_high"]) == (1, 1)
    assert (systems["w"]["rank"], systems["w"]["rank_high"]) == (4, 4)
    # x and y are close: they share the middle ranks
    assert (systems["x"]["rank_low"], systems["x"]["rank_high"]) == (2, 3)
    assert (systems["y"]["rank_low"], systems["y"]["rank_high"]) == (2, 3)
    assert systems["x"]["battles"] == 360 and report["clusters"] == 120


def test_interval_coverage_in_seeded_simulation() -> None:
    # 50 tournaments of 3 systems x 40 dialogues; each system's 95% interval should hold its
    # true centred rating about 95% of the time (here 141 of 150). The bound keeps the power
    # the test had with 100 tournaments and a bound of 0.85: intervals that held the truth
    # only 80% of the time would pass either way with probability ~1.5%.
    truth = {"x": -0.4, "y": 0.0, "z": 0.6}
    mean = sum(truth.values()) / 3
    true_rating = {s: 1000 + RATING_SCALE * (t - mean) for s, t in truth.items()}
    covered = total = 0
    for tournament in range(50):
        battles = simulated_tournament(truth, items=40, seed=1000 + tournament)
        systems = bradley_terry(battles, n_resamples=120, seed=tournament)["systems"]
        for name, row in systems.items():
            total += 1
            covered += row["ci_low"] <= true_rating[name] <= row["ci_high"]
    assert total == 150 and 0.87 <= covered / total <= 1.0


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_fit_ignores_battle_order_and_presentation_side(seed: int) -> None:
    battles = simulated_tournament({"x": 0.0, "y": 0.5, "z": -0.5}, items=6, seed=seed)
    theta = bradley_terry_strengths(battles)
    shuffled = [battles[i] for i in np.random.default_rng(seed).permutation(len(battles))]
    assert bradley_terry_strengths(shuffled) == pytest.approx(theta, abs=1e-5)
    flip = {"a": "b", "b": "a", "tie": "tie"}
    swapped = [battle(b.system_b, b.system_a, flip[b.winner], b.item_id) for b in battles]  # type: ignore[arg-type]
    assert bradley_terry_strengths(swapped) == pytest.approx(theta, abs=1e-5)


def test_unbeaten_system_gets_a_finite_rating_and_is_flagged() -> None:
    battles = [battle("A", "B", "a", f"d{i}") for i in range(10)]
    battles += [battle("B", "C", w, f"e{i}") for i, w in enumerate("ab" * 5)]
    report = bradley_terry(battles, n_resamples=100)
    assert report["unbounded"] == ["A"]
    a = report["systems"]["A"]
    assert math.isfinite(a["rating"]) and a["rating"] > 1500
    # no interval bounds it: open, and its rank can be anything, never a certain first
    assert a["unbounded"] == UNBOUNDED_WON
    assert (a["ci_low"], a["ci_high"], a["rank_low"], a["rank_high"]) == (None, None, 1, 3)
    assert report["systems"]["B"]["unbounded"] is None
    assert report["systems"]["B"]["rating"] == pytest.approx(
        report["systems"]["C"]["rating"], abs=1.0
    )
    assert bradley_terry(battles[10:], n_resamples=10)["unbounded"] == []


def test_a_tie_bounds_the_estimate() -> None:
    battles = [battle("A", "B", "a", f"d{i}") for i in range(5)] + [battle("A", "B", "tie", "t")]
    theta = bradley_terry_strengths(battles)
    # A has 5.5 of 6 points: odds 11, gap ln 11, no ridge needed
    assert theta["A"] - theta["B"] == pytest.approx(math.log(11), abs=1e-2)
    assert bradley_terry(battles, n_resamples=10)["unbounded"] == []


@pytest.mark.parametrize("dialogues", [2, 5, 40])
def test_a_sweep_is_never_certain(dialogues: int) -> None:
    """Regression: a sweep gave the ridge-set rating with ci_low == ci_high and rank [1, 1]."""
    # A shown first or second, A always wins
    battles = [
        battle("A", "B", "a", f"d{i}") if i % 2 else battle("B", "A", "b", f"d{i}")
        for i in range(dialogues)
    ]
    report = bradley_terry(battles, n_resamples=50)
    a, b = report["systems"]["A"], report["systems"]["B"]
    assert (a["unbounded"], b["unbounded"]) == (UNBOUNDED_WON, UNBOUNDED_LOST)
    for entry in (a, b):
        assert entry["ci_low"] is None and entry["ci_high"] is None
        assert (entry["rank_low"], entry["rank_high"]) == (1, 2)


def test_disconnected_battles_give_unbounded_ratings_per_group() -> None:
    battles = [
        battle("A", "B", "a", "d1"),
        battle("A", "B", "b", "d2"),
        battle("A", "B", "a", "d3"),
    ]
    battles += [battle("C", "D", "a", "e1"), battle("C", "D", "tie", "e2")]
    report = disconnected_ratings(battles)
    assert report["groups"] == [["A", "B"], ["C", "D"]]
    assert report["unbounded"] == ["A", "B", "C", "D"]
    assert report["ci_note"].startswith("the battles do not link every system")
    for entry in report["systems"].values():
        assert entry["unbounded"].startswith("not linked to every other system")
        assert entry["ci_low"] is None and entry["rank"] is None
    # within a group the ridge fit is the group's own: A 2 of 3 against B, gap ln 2
    gap = report["systems"]["A"]["rating"] - report["systems"]["B"]["rating"]
    assert gap == pytest.approx(400 * math.log10(2), abs=0.5)


def test_item_interval_counts_dropped_rounds_and_says_why_none() -> None:
    """The interval both Bradley-Terry and style control use: a refit that is undefined on
    every round leaves no interval, with the note and every round counted as dropped."""
    battles = [battle("A", "B", "a", "d1"), battle("A", "B", "b", "d2")]
    arrays = BattleArrays.of(battles)
    none = item_bootstrap_interval(arrays, lambda w: None, n_resamples=20, seed=0, confidence=0.95)
    assert (none.low, none.note, none.dropped, none.resamples) == (
        None,
        NOTE_TOO_FEW_ROUNDS,
        20,
        20,
    )
    # the refit returns the total weight of the first item's battle: its 2.5/97.5 percentiles
    ok = item_bootstrap_interval(
        arrays, lambda w: np.array([w[0]]), n_resamples=200, seed=0, confidence=0.95
    )
    assert ok.note is None and ok.dropped == 0 and ok.resamples == 200
    assert ok.low is not None and ok.high is not None
    assert (ok.low[0], ok.high[0]) == (0.0, 2.0)
    single = item_bootstrap_interval(
        BattleArrays.of(battles[:1]), lambda w: w, n_resamples=20, seed=0, confidence=0.95
    )
    assert (single.note, single.resamples) == (NOTE_TOO_FEW_ITEMS, 0)
