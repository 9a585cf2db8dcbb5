"""Variance between scenarios vs between trials: golden values and recovery on simulations."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from tests.analysis.perturbation_rows import row, simulated_rows
from voxeval.analysis.call_statistics import variance_summary
from voxeval.analysis.variance_components import (
    NOTE_NO_REPEATS,
    NOTE_NO_VARIANCE,
    NOTE_TOO_FEW_SCENARIOS,
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
    assert "one score per unit" in out["judge_repeat"]["reason"]
