from __future__ import annotations

import numpy as np
import pytest

from tests.analysis.arena_battles import battle, simulated_tournament
from voxeval.analysis.ratings.battles import Battle, Winner
from voxeval.analysis.ratings.bradley_terry import bradley_terry
from voxeval.analysis.ratings.style_control import (
    style_controlled,
    style_covariates,
    style_difference,
)


def test_style_difference_formula() -> None:
    assert style_difference(10, 4) == pytest.approx(6 / 15)
    assert style_difference(4, 10) == pytest.approx(-6 / 15)
    assert style_difference(0, 0) == 0.0


def test_covariates_are_z_scored_and_unusable_features_dropped() -> None:
    battles = [
        battle("A", "B", "a", "d1", length_a=10, length_b=4, duration_a=1, speed_a=1, speed_b=1),
        battle("A", "B", "b", "d2", length_a=4, length_b=10, duration_a=2, speed_a=1, speed_b=1),
        battle("A", "B", "a", "d3", length_a=5, length_b=5, duration_a=3, speed_a=1, speed_b=1),
    ]
    matrix, used, dropped = style_covariates(battles, ("length", "duration", "speed"))
    assert used == ["length"]
    assert dropped == {
        "duration": "missing on 3 of 3 battles",
        "speed": "does not vary across battles",
    }
    # raw differences 0.4, -0.4, 0 -> mean 0, population sd sqrt(0.32/3)
    sd = np.sqrt(0.32 / 3)
    assert matrix[:, 0] == pytest.approx([0.4 / sd, -0.4 / sd, 0.0])


def test_without_style_features_equals_plain_bradley_terry() -> None:
    battles = simulated_tournament({"x": 0.0, "y": 0.6, "z": 1.1}, items=12, seed=2)
    plain = bradley_terry(battles, n_resamples=100, seed=4)
    controlled = style_controlled(battles, n_resamples=100, seed=4)
    assert controlled["features_used"] == [] and controlled["coefficients"] == {}
    assert set(controlled["features_dropped"]) == {"length", "duration"}
    for name, row in plain["systems"].items():
        assert controlled["systems"][name]["rating"] == pytest.approx(row["rating"], abs=1e-4)
        assert controlled["systems"][name]["ci_low"] == pytest.approx(row["ci_low"], abs=1e-3)


def length_biased_battles(seed: int, items: int = 120) -> list[Battle]:
    """Three systems of equal quality whose replies differ in length (verbose > medium >
    terse on average, with overlap); the judge's log-odds are 1.2 per standard deviation of
    the length difference and nothing else. Duration is measured but plays no role."""
    rng = np.random.default_rng(seed)
    mean_length = {"verbose": 150.0, "medium": 110.0, "terse": 70.0}
    names = sorted(mean_length)
    rows = []
    for item in range(items):
        for i, first in enumerate(names):
            for second in names[i + 1 :]:
                a, b = (first, second) if rng.random() < 0.5 else (second, first)
                len_a, len_b = (max(5.0, rng.normal(mean_length[s], 35.0)) for s in (a, b))
                rows.append((a, b, f"d{item}", len_a, len_b))
    diff = np.array([style_difference(r[3], r[4]) for r in rows])
    z = (diff - diff.mean()) / diff.std()
    battles: list[Battle] = []
    for (a, b, item_id, len_a, len_b), z_length in zip(rows, z, strict=True):
        winner: Winner = "a" if rng.random() < 1 / (1 + np.exp(-1.2 * z_length)) else "b"
        durations = rng.uniform(5, 20, 2)
        battles.append(
            battle(
                a,
                b,
                winner,
                item_id,
                len(battles),
                length_a=len_a,
                length_b=len_b,
                duration_a=durations[0],
                duration_b=durations[1],
            )
        )
    return battles


def test_style_control_removes_a_planted_length_bias() -> None:
    battles = length_biased_battles(seed=21)
    raw = bradley_terry(battles, n_resamples=150)["systems"]
    controlled = style_controlled(battles, n_resamples=150)
    styled = controlled["systems"]
    raw_gap = raw["verbose"]["rating"] - raw["terse"]["rating"]
    styled_gap = styled["verbose"]["rating"] - styled["terse"]["rating"]
    assert raw_gap > 100  # the judge's taste looks like a large quality gap
    assert abs(styled_gap) < raw_gap / 3
    # equal true quality: the controlled intervals overlap, the terse system is not ranked last
    assert styled["terse"]["ci_high"] > styled["verbose"]["ci_low"]
    length = controlled["coefficients"]["length"]
    assert length["ci_low"] > 0.5 and length["coefficient"] == pytest.approx(1.2, abs=0.35)
    assert length["rating_points"] == pytest.approx(length["coefficient"] * 400 / np.log(10))
    duration = controlled["coefficients"]["duration"]
    assert duration["ci_low"] < 0 < duration["ci_high"]
    assert controlled["features_used"] == ["length", "duration"]
