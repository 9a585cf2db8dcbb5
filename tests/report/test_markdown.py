from __future__ import annotations

from voxeval.report.document import walk_stats
from voxeval.report.html import render_html
from voxeval.report.markdown import render_markdown

STAT = {"mean": 0.5, "ci_low": 0.25, "ci_high": 0.75, "n": 8}


def test_render_tables_and_extra_results() -> None:
    summary = {
        "run_id": "r1",
        "suite": {"name": "demo", "protocol": "live_call"},
        "seed": 0,
        "systems": {
            "agent": {
                "overall": {"task_completion": STAT},
                "by_category": {"auth": {"task_completion": STAT}},
                "by_condition": {},
                "not_run": {"faithfulness": "no judge configured"},
                "units": {"done": 8, "failed": 0, "pending": 0},
                "pass_at_k": [{"k": 1, **STAT}, {"k": 2, **STAT}],
                "turn_taking": STAT,
                "by_pf_subcategory": {"pause": {"checklist": STAT}},
            }
        },
        "usage": {"by_provider": {"judge": {"calls": 3, "cost_usd": 0.5}}, "total": {}},
    }
    md = render_markdown(summary)
    assert "| task_completion | 0.5 | [0.25, 0.75] | 8 |" in md
    assert "| auth | task_completion | 0.5 |" in md
    assert "| pass_at_k k=2 | 0.5 |" in md and "| turn_taking | 0.5 |" in md
    assert "- faithfulness: no judge configured" in md
    assert "| by_pf_subcategory.pause.checklist | 0.5 |" in md
    assert "$0.5000" in md
    page = render_html(summary)
    assert page.startswith("<!doctype html>") and "<td>task_completion</td>" in page
    assert "<li>faithfulness: no judge configured</li>" in page


def test_walk_stats_labels_nested_values() -> None:
    found = dict(walk_stats("x", {"a": STAT, "b": [{"k": 3, **STAT}], "c": "text"}))
    assert set(found) == {"x.a", "x.b k=3"}


def test_header_states_the_method_and_notes_replace_missing_intervals() -> None:
    equal = {
        "mean": 0.0,
        "ci_low": None,
        "ci_high": None,
        "n": 6,
        "clusters": 3,
        "method": "cluster_bootstrap",
        "ci_note": "all values equal",
    }
    rate = {**STAT, "method": "wilson", "clusters": 4, "n_eff": 4.0, "design_effect": 2.0}
    summary = {
        "run_id": "r2",
        "suite": {"name": "wild", "protocol": "single_turn"},
        "systems": {
            "tiny": {
                "overall": {"wer": equal, "language": rate},
                "pass_rates": {"assertions": rate},
                "statistics": {
                    "unit": "query",
                    "clusters": 3,
                    "resamples": 2000,
                    "confidence": 0.95,
                    "rate_metrics": ["language"],
                },
            }
        },
    }
    md = render_markdown(summary)
    assert "| wer | 0 | none (all values equal) | 6 (3 queries) |" in md
    assert "| language | 0.5 | [0.25, 0.75] | 8 (4 queries) |" in md
    assert "### Pass rates (threshold verdicts)" in md and "| assertions | 0.5 |" in md
    header = (
        "Intervals are 95% confidence intervals that resample the independent unit, the "
        "query (all its voices, conditions and trials together): means use a cluster "
        "bootstrap (2,000 seeded percentile resamples of whole queries); pass/fail rates "
        "(language) and pass rates use the Wilson interval"
    )
    assert header in md
    assert "statistics" not in md.split(header)[1]  # the note block is not a results table
    page = render_html(summary)
    assert header in page and "<td>none (all values equal)</td>" in page


def test_excluded_units_and_system_faults_are_warned_about_per_system() -> None:
    units = {
        "done": 6,
        "failed": 3,
        "pending": 0,
        "system_faults": {"timeout": 2, "exception": 1},
        "failed_by_cause": {"renderer": 2, "simulator": 1},
        "pending_metrics": 4,
    }
    clean = {"done": 9, "failed": 0, "pending": 0, "system_faults": {}, "failed_by_cause": {}}
    summary = {
        "suite": {"name": "demo"},
        "systems": {
            "flaky": {"overall": {"task_completion": STAT}, "units": units},
            "steady": {"overall": {"task_completion": STAT}, "units": clean},
        },
    }
    md = render_markdown(summary)
    flaky, steady = md.split("## System steady")
    assert (
        "**Warning:** 3 units failed on voxeval's side (renderer 2, simulator 1) and are "
        "excluded from every mean" in flaky
    )
    assert "**Warning:** 4 scores are pending" in flaky
    assert "**Note:** 3 units are failures of the system under test (exception 1, timeout 2)" in (
        flaky
    )
    assert "Units: done 6, failed 3, pending 0, pending_metrics 4" in flaky
    assert "Warning" not in steady and "Note" not in steady


def test_whole_total_sums_the_counts_of_a_section_and_nothing_else() -> None:
    from voxeval.report.json_fields import whole_total

    assert whole_total({"timeout": 2, "crash": 3, "note": "x", "share": 0.5}) == 5
    assert whole_total(None) == 0 and whole_total([1, 2]) == 0
