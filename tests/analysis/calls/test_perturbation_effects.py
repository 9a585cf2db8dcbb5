"""Perturbation effects: paired per-scenario deltas, permutation p-values and Holm."""

import random

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from tests.analysis.perturbation_rows import row, simulated_rows
from voxeval.analysis.calls.perturbation_effects import holm_adjust, perturbation_effects


def _effect(table: dict, condition: str, metric: str = "turn_taking") -> dict:
    [found] = [e for e in table["effects"] if e["condition"] == condition and e["metric"] == metric]
    return found


def test_delta_is_the_mean_of_paired_scenario_means() -> None:
    rows = [
        # scenario a: clean trials 1, 3 (mean 2); noisy 0, 0 (mean 0) -> delta -2
        row("a", "clean", "turn_taking", 1.0, trial=0),
        row("a", "clean", "turn_taking", 3.0, trial=1),
        row("a", "noisy", "turn_taking", 0.0, trial=0),
        row("a", "noisy", "turn_taking", 0.0, trial=1),
        # scenario b: clean 4; noisy 3 -> delta -1
        row("b", "clean", "turn_taking", 4.0),
        row("b", "noisy", "turn_taking", 3.0),
        # scenario c: only clean -> not paired
        row("c", "clean", "turn_taking", 9.0),
        # a score that did not run is left out and counted
        row("b", "noisy", "turn_taking", None, trial=1, error="judge down"),
    ]
    table = perturbation_effects(rows, seed=1)
    effect = _effect(table, "noisy")
    assert effect["delta"]["mean"] == pytest.approx(-1.5)
    assert effect["scenarios"] == 2 and effect["unpaired_scenarios"] == 1
    assert effect["not_run"] == {"clean": 0, "noisy": 1}
    # deltas -2, -1: |mean| 1.5 is reached only with both signs equal -> p = 2/4
    assert effect["p_value"] == pytest.approx(0.5) and effect["test"] == "exact"
    assert effect["p_holm"] == pytest.approx(0.5) and effect["significant"] is False
    # task_completion has no scores: named, not dropped silently
    assert {"condition": "*", "metric": "task_completion",
            "reason": "no scores stored for this metric"} in table["not_compared"]  # fmt: skip


def test_failed_calls_count_with_their_stored_failure_value() -> None:
    # A call the system under test failed is stored with task_completion 0: it pulls the
    # condition's scenario mean down rather than vanishing.
    rows = [row(s, "clean", "task_completion", 1.0) for s in ("a", "b", "c")]
    rows += [row(s, "noisy", "task_completion", 1.0) for s in ("a", "b")]
    rows.append(row("c", "noisy", "task_completion", 0.0))  # system fault: a failure
    effect = _effect(perturbation_effects(rows), "noisy", "task_completion")
    assert effect["delta"]["mean"] == pytest.approx(-1 / 3)
    assert effect["scenarios"] == 3


def test_metric_missing_in_one_condition_is_listed_not_compared() -> None:
    rows = [row(s, "clean", "stt_wer", 0.1) for s in ("a", "b")]
    rows += [row(s, "noisy", "stt_wer", None, error="no ASR") for s in ("a", "b")]
    table = perturbation_effects(rows)
    assert table["effects"] == []
    assert {"condition": "noisy", "metric": "stt_wer",
            "reason": "no scores with a value in 'noisy'"} in table["not_compared"]  # fmt: skip


def test_runs_without_a_perturbation_or_a_baseline_say_so() -> None:
    only_clean = perturbation_effects([row("a", "clean", "turn_taking", 1.0)])
    assert only_clean["note"] == "no perturbation condition in this run"
    no_clean = perturbation_effects([row("a", "noisy", "turn_taking", 1.0)])
    assert no_clean["note"] == "no 'clean' condition to compare against"


def test_holm_matches_hand_computation() -> None:
    # sorted 0.01, 0.03, 0.04 -> x3, x2, x1 = 0.03, 0.06, 0.04 -> running max 0.03, 0.06, 0.06
    adjusted, reject = holm_adjust([0.01, 0.04, 0.03])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06])
    assert reject == [True, False, False]
    adjusted, reject = holm_adjust([0.2, 0.001])
    assert adjusted == pytest.approx([0.2, 0.002]) and reject == [False, True]
    # one condition: Holm leaves the p-value as it is (the shortcut agrees with statsmodels)
    assert holm_adjust([0.049]) == ([0.049], [True])
    _, sm_adjusted, _, _ = multipletests([0.049], alpha=0.05, method="holm")
    assert list(sm_adjusted) == [0.049]
    # significant means adjusted p strictly below alpha (EVA-Bench's rule)
    assert holm_adjust([0.05]) == ([0.05], [False])
    assert holm_adjust([0.025, 0.5]) == ([0.05, 0.5], [False, False])


def test_holm_is_applied_across_the_conditions_of_a_metric() -> None:
    rng = np.random.default_rng(4)
    rows = simulated_rows(
        rng, scenarios=10, trials=2, effects={"clean": 0.0, "loud": 2.0, "quiet": 0.1}
    )
    table = perturbation_effects(rows, seed=4)
    effects = [e for e in table["effects"] if e["metric"] == "turn_taking"]
    adjusted, reject = holm_adjust([e["p_value"] for e in effects])
    assert [e["p_holm"] for e in effects] == pytest.approx(adjusted)
    assert [e["significant"] for e in effects] == reject
    assert _effect(table, "loud")["p_holm"] == pytest.approx(2 * 2 / 2**10)


def test_strong_effect_gives_small_p_and_a_ci_excluding_zero() -> None:
    rng = np.random.default_rng(7)
    rows = simulated_rows(rng, scenarios=12, trials=3, effects={"clean": 0.0, "noisy": -1.5})
    effect = _effect(perturbation_effects(rows, seed=7), "noisy")
    assert effect["p_value"] < 0.01 and effect["significant"] is True
    assert effect["delta"]["ci_high"] < 0
    assert effect["delta"]["mean"] == pytest.approx(-1.5, abs=0.3)


def test_strong_effect_over_the_exact_limit_uses_monte_carlo() -> None:
    rng = np.random.default_rng(8)
    rows = simulated_rows(rng, scenarios=30, trials=2, effects={"clean": 0.0, "noisy": 1.0})
    effect = _effect(perturbation_effects(rows, seed=8), "noisy")
    assert effect["test"] == "monte_carlo" and effect["p_value"] < 0.01


def test_zero_effect_gives_uniform_p_values() -> None:
    p_values = []
    for seed in range(200):
        rng = np.random.default_rng(1000 + seed)
        rows = simulated_rows(rng, scenarios=10, trials=2, effects={"clean": 0.0, "same": 0.0})
        p_values.append(_effect(perturbation_effects(rows, seed=seed), "same")["p_value"])
    below = sum(p < 0.05 for p in p_values)
    # share of p < 0.05 within the binomial range of a 5% rate (two-sided 0.1% level)
    assert stats.binomtest(below, 200, 0.05).pvalue > 0.001, below
    assert stats.kstest(p_values, "uniform").pvalue > 0.001


def test_same_seed_same_table_whatever_the_row_order() -> None:
    rng = np.random.default_rng(9)
    rows = simulated_rows(rng, scenarios=20, trials=2, effects={"clean": 0.0, "noisy": 0.2})
    shuffled = list(rows)
    random.Random(3).shuffle(shuffled)
    first = perturbation_effects(rows, seed=3)
    assert _effect(first, "noisy")["test"] == "monte_carlo"
    assert perturbation_effects(shuffled, seed=3) == first
