"""Variance between scenarios vs between trials: golden values and recovery on simulations."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from tests.analysis.perturbation_rows import row, simulated_rows
from voxeval.analysis.calls.call_statistics import variance_summary
from voxeval.analysis.calls.variance_components import (
    NOTE_NO_JUDGE_REPEATS,
    NOTE_NO_REPEATS,
    NOTE_NO_VARIANCE,
    NOTE_TOO_FEW_SCENARIOS,
    nested_variance_components,
    variance_components,
)


def test_balanced_golden_values() -> None:
    # means 2 and 6, grand mean 4: MS_between = (2*4 + 2*4) / 1 = 16; MS_within = 4 / 2 = 2;
    # n0 = 2 -> between = (16 - 2) / 2 = 7, within = 2, share 7 / 9
    out = variance_components({"a": [1.0, 3.0], "b": [5.0, 7.0]})
    assert out["between_scenarios"] == pytest.approx(7.0)
    assert out["within_scenario"] == pytest.approx(2.0)
    assert out["scenario_share"] == pytest.approx(7 / 9)
    assert out["truncated"] is False and out["effective_trials"] == pytest.approx(2.0)


def test_unbalanced_golden_values() -> None:
    # a: [0, 2] (mean 1), b: [4] (mean 4), c: [1, 1, 4] (mean 2); N = 6, grand mean 2
    # SS_between = 2*1 + 1*4 + 3*0 = 6 -> MS_between = 3; SS_w = 2 + 0 + 6 = 8 -> MS_w = 8/3
    # n0 = (6 - (4 + 1 + 9) / 6) / 2 = 11/6 -> between = (3 - 8/3) / (11/6) = 2/11
    out = variance_components({"a": [0.0, 2.0], "b": [4.0], "c": [1.0, 1.0, 4.0]})
    assert out["within_scenario"] == pytest.approx(8 / 3)
    assert out["between_scenarios"] == pytest.approx(2 / 11)
    assert out["effective_trials"] == pytest.approx(11 / 6)


def test_negative_moment_estimate_is_truncated_at_zero() -> None:
    out = variance_components({"a": [0.0, 10.0], "b": [1.0, 9.0]})  # equal means, big noise
    assert out["between_scenarios"] == 0.0 and out["truncated"] is True
    assert out["scenario_share"] == 0.0


def test_notes_when_the_data_cannot_separate_the_components() -> None:
    assert variance_components({"a": [1.0, 2.0]})["note"] == NOTE_TOO_FEW_SCENARIOS
    one_trial = variance_components({"a": [1.0], "b": [2.0]})
    assert one_trial["note"] == NOTE_NO_REPEATS and one_trial["between_scenarios"] is None
    flat = variance_components({"a": [1.0, 1.0], "b": [1.0, 1.0]})
    assert flat["note"] == NOTE_NO_VARIANCE and flat["scenario_share"] is None


def test_recovers_known_components_on_simulated_data() -> None:
    rng = np.random.default_rng(21)
    groups = {s: list(rng.normal(rng.normal(0, 2.0), 1.0, size=5)) for s in range(300)}
    out = variance_components(groups)
    assert out["between_scenarios"] == pytest.approx(4.0, rel=0.2)
    assert out["within_scenario"] == pytest.approx(1.0, rel=0.1)
    assert out["scenario_share"] == pytest.approx(0.8, abs=0.05)


def test_agrees_with_statsmodels_reml_on_balanced_data() -> None:
    # On balanced data the ANOVA estimator equals REML when it is not truncated.
    rng = np.random.default_rng(5)
    groups = {f"s{s}": list(rng.normal(rng.normal(0, 1.0), 0.7, size=4)) for s in range(40)}
    data = pd.DataFrame(
        {
            "y": [v for vals in groups.values() for v in vals],
            "g": [g for g, vals in groups.items() for _ in vals],
        }
    )
    fit = smf.mixedlm("y ~ 1", data, groups=data["g"]).fit(reml=True)
    out = variance_components(groups)
    assert out["between_scenarios"] == pytest.approx(float(fit.cov_re.iloc[0, 0]), rel=1e-3)
    assert out["within_scenario"] == pytest.approx(float(fit.scale), rel=1e-3)


def test_summary_per_metric_and_condition_and_no_judge_repeats() -> None:
    rng = np.random.default_rng(3)
    rows = simulated_rows(rng, scenarios=6, trials=3, effects={"clean": 0.0, "noisy": 1.0})
    rows.append(row("s000", "clean", "turn_taking", None, trial=3, error="not run"))
    out = variance_summary(rows)
    assert set(out["by_metric"]["turn_taking"]) == {"clean", "noisy"}
    assert out["by_metric"]["turn_taking"]["clean"]["n"] == 18  # the not-run score left out
    assert out["judge_repeat"]["available"] is False
    assert "judge_repeats" in out["judge_repeat"]["reason"]


def test_nested_golden_values() -> None:
    # every call graded twice, 1 apart -> judge = (4 cells * 2 * 1^2) / 4 = 2
    # call means a: [2, 5], b: [6, 9] -> one-way: between = (16 - 4.5) / 2 = 5.75, within 4.5
    # trial = 4.5 - judge / 2 = 3.5; total 11.25
    groups = {"a": {0: [1.0, 3.0], 1: [4.0, 6.0]}, "b": {0: [5.0, 7.0], 1: [8.0, 10.0]}}
    out = nested_variance_components(groups)
    assert out["judge_repeat"] == pytest.approx(2.0)
    assert out["between_scenarios"] == pytest.approx(5.75)
    assert out["within_scenario"] == pytest.approx(3.5)
    assert out["gradings_per_call"] == pytest.approx(2.0)
    assert out["scenario_share"] == pytest.approx(5.75 / 11.25)
    assert out["trial_share"] == pytest.approx(3.5 / 11.25)
    assert out["judge_share"] == pytest.approx(2.0 / 11.25)
    assert (out["calls"], out["n"]) == (4, 8)


def test_nested_without_repeats_says_so() -> None:
    out = nested_variance_components({"a": {0: [1.0], 1: [2.0]}, "b": {0: [3.0]}})
    assert out["judge_repeat"] is None and out["note"] == NOTE_NO_JUDGE_REPEATS


def test_nested_recovers_simulated_components() -> None:
    # scenario sd 1, trial sd 0.5, judge sd 0.3: 300 scenarios x 4 trials x 3 gradings
    rng = np.random.default_rng(11)
    groups = {
        s: {
            t: list(mu_s + mu_t + rng.normal(0, 0.3, 3))
            for t, mu_t in enumerate(rng.normal(0, 0.5, 4))
        }
        for s, mu_s in enumerate(rng.normal(0, 1.0, 300))
    }
    out = nested_variance_components(groups)
    assert out["judge_repeat"] == pytest.approx(0.09, rel=0.1)
    assert out["within_scenario"] == pytest.approx(0.25, rel=0.15)
    assert out["between_scenarios"] == pytest.approx(1.0, rel=0.2)


def test_summary_uses_judge_repeats_when_stored() -> None:
    rows = []
    for s, base in (("a", 0.0), ("b", 1.0)):
        for t in range(2):
            gradings = [base + t * 0.5, base + t * 0.5 + 0.5]
            r = row(s, "clean", "faithfulness", gradings[0], trial=t)
            rows.append(replace(r, details={"judge_repeat_values": gradings}))
            rows.append(row(s, "clean", "turn_taking", base + t, trial=t))
    out = variance_summary(rows)
    assert out["judge_repeat"]["available"] is True
    assert out["judge_repeat"]["metrics"] == ["faithfulness"]
    faith = out["by_metric"]["faithfulness"]["clean"]
    assert faith["judge_repeat"] == pytest.approx(0.125)  # (4 * 2 * 0.25^2) / 4
    assert "judge_repeat" not in out["by_metric"]["turn_taking"]["clean"]
