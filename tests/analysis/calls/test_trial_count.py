"""CI width of the mean over scenarios as a function of the number of trials used."""

import numpy as np
import pytest

from tests.analysis.perturbation_rows import row
from voxeval.analysis.bootstrap import metric_stats
from voxeval.analysis.calls.call_statistics import call_statistics, trial_count_summary
from voxeval.analysis.calls.trial_count import ci_width_by_trials


def test_first_k_trials_are_used_in_trial_order() -> None:
    # trial 0 is always 0, trial 1 always 1: k=1 keeps only the zeros
    by_scenario = {s: {1: 1.0, 0: 0.0} for s in ("a", "b", "c")}
    curve = ci_width_by_trials(by_scenario, seed=1)
    assert [p["k"] for p in curve] == [1, 2]
    assert curve[0]["mean"] == 0.0 and curve[0]["width"] is None  # all values equal
    assert curve[0]["ci_note"] == "all values equal"
    assert curve[1]["mean"] == pytest.approx(0.5) and curve[1]["n"] == 6


def test_width_is_the_seeded_cluster_bootstrap_width() -> None:
    rng = np.random.default_rng(2)
    by_scenario = {f"s{i}": {t: float(rng.normal()) for t in range(3)} for i in range(8)}
    curve = ci_width_by_trials(by_scenario, seed=4)
    keys = [s for s in sorted(by_scenario) for _ in range(2)]
    values = [by_scenario[s][t] for s in sorted(by_scenario) for t in range(2)]
    expected = metric_stats(values, clusters=keys, seed=4)
    assert curve[1]["width"] == pytest.approx(expected["ci_high"] - expected["ci_low"])
    assert curve == ci_width_by_trials(by_scenario, seed=4)


def test_width_shrinks_with_trials_when_trial_noise_dominates() -> None:
    rng = np.random.default_rng(8)
    by_scenario = {f"s{i}": {t: float(rng.normal(0.0, 3.0)) for t in range(8)} for i in range(30)}
    widths = [p["width"] for p in ci_width_by_trials(by_scenario, seed=0)]
    assert widths[-1] < 0.5 * widths[0]  # 1/sqrt(8) of the noise: about 0.35


def test_scenarios_with_fewer_trials_keep_what_they_have() -> None:
    curve = ci_width_by_trials({"a": {0: 1.0, 1: 2.0, 2: 3.0}, "b": {0: 5.0}}, seed=0)
    assert [p["n"] for p in curve] == [2, 3, 4]


def test_summary_entries_per_metric_and_condition_and_metric_filter() -> None:
    rows = [row(s, c, m, float(i), trial=t)
            for i, s in enumerate("abc") for c in ("clean", "noisy")
            for m in ("turn_taking", "stt_wer") for t in range(2)]  # fmt: skip
    curves = trial_count_summary(rows)
    assert set(curves) == {"turn_taking", "stt_wer"}
    assert [p["k"] for p in curves["turn_taking"]["noisy"]] == [1, 2]
    stats = call_statistics(rows, metrics=["turn_taking"])
    assert set(stats) == {"perturbation_effects", "variance_components", "ci_width_by_trials"}
    assert set(stats["ci_width_by_trials"]) == {"turn_taking"}
    assert set(stats["variance_components"]["by_metric"]) == {"turn_taking"}
