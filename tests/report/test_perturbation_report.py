"""The perturbation-statistics sections of the Markdown report."""

from voxeval.report.markdown import render_markdown


def _summary(entry: dict) -> dict:
    return {"suite": {"name": "s", "protocol": "live_call"}, "systems": {"sut": entry}}


def test_effects_table_rows_and_not_compared_reasons() -> None:
    effects = {
        "baseline": "clean",
        "alpha": 0.05,
        "exact_max_scenarios": 13,
        "monte_carlo_resamples": 9999,
        "effects": [
            {
                "condition": "noise",
                "metric": "task_completion",
                "delta": {"mean": -0.25, "ci_low": -0.4, "ci_high": -0.1, "n": 20},
                "scenarios": 20,
                "not_run": {"clean": 1, "noise": 2},
                "p_value": 0.0012,
                "test": "monte_carlo",
                "p_holm": 0.0024,
                "significant": True,
            }
        ],
        "not_compared": [{"condition": "noise", "metric": "stt_wer", "reason": "no values"}],
    }
    text = render_markdown(_summary({"perturbation_effects": effects}))
    row = (
        "| noise | task_completion | -0.25 [-0.4, -0.1] | 20 | 3 | 0.0012 (monte_carlo) "
        "| 0.0024 | yes |"
    )
    assert row in text
    assert "- noise, stt_wer: no values" in text
    # the nested delta stats are not repeated under "Protocol results"
    assert "Protocol results" not in text


def test_note_instead_of_a_table_and_variance_rows() -> None:
    entry = {
        "perturbation_effects": {"baseline": "clean", "note": "no perturbation condition"},
        "variance_components": {
            "estimator": "one-way random-effects ANOVA, method of moments",
            "judge_repeat": {"available": False, "reason": "no repeats"},
            "by_metric": {
                "turn_taking": {
                    "clean": {"between_scenarios": 0.5, "within_scenario": 0.25,
                              "scenario_share": 2 / 3, "scenarios": 4, "n": 8}
                }
            },
        },
        "ci_width_by_trials": {"turn_taking": {"clean": [{"k": 1, "width": 0.4},
                                                         {"k": 2, "width": 0.3}]}},
    }  # fmt: skip
    text = render_markdown(_summary(entry))
    assert "no perturbation condition." in text
    assert "| turn_taking | clean | 0.5 | 0.25 | – | 0.667 | 4 | 8 |  |" in text
    assert "Judge-repeat component: no repeats." in text
    assert "| turn_taking | clean | 0.4 | 0.3 |" in text
