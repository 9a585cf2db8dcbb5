"""The single-turn breakdowns, latency, judge reliability, side-by-side systems and paired
differences appear in the Markdown and HTML report, not only in summary.json."""

from __future__ import annotations

from voxeval.report.html import render_html
from voxeval.report.markdown import render_markdown

STAT = {"mean": 0.5, "ci_low": 0.25, "ci_high": 0.75, "n": 8}
OTHER = {"mean": 0.7, "ci_low": 0.6, "ci_high": 0.8, "n": 8}


def summary() -> dict:
    entry = {
        "overall": {"checklist": STAT},
        "by_gender": {"female": {"checklist": STAT}, "male": {"checklist": OTHER}},
        "by_engine": {"piper": {"checklist": STAT}},
        "by_noise_category": {"babble": {"checklist": OTHER}},
        "latency": {"total_s": {"p50": 1.25, "p90": 2.5, "n": 8}},
        "judge": {"calls": 24, "parse_failures": 3, "parse_failure_rate": 0.125},
        "transcripts": {"rejected_by_repetition_filter": 2, "units_with_transcripts": 8},
    }
    difference = {"mean": -0.2, "ci_low": -0.4, "ci_high": -0.05, "n": 8}
    return {
        "run_id": "r1",
        "suite": {"name": "demo", "protocol": "single_turn"},
        "seed": 0,
        "systems": {"a": entry, "b": {"overall": {"checklist": OTHER}}},
        "pairwise": {
            "unit": "query",
            "pairs": [
                {
                    "a": "a",
                    "b": "b",
                    "metrics": {
                        "checklist": {
                            **STAT, "better": "higher", "wins": 2, "ties": 4, "losses": 2,
                            "difference": difference,
                        }
                    },
                }
            ],
        },
    }  # fmt: skip


def test_markdown_shows_breakdowns_latency_reliability_and_differences() -> None:
    md = render_markdown(summary())
    assert "### By gender" in md and "| male | checklist | 0.7 | [0.6, 0.8] | 8 |" in md
    assert "| piper | checklist | 0.5 |" in md
    assert "### By noise category" in md and "| babble | checklist | 0.7 |" in md
    assert "| total_s | 1.25 | 2.5 | 8 |" in md
    assert "### Judge reliability" in md
    assert "judge calls 24, parse failures 3 (rate 0.125)" in md
    assert "repetition (hallucination) filter: 2 over 8 units" in md
    assert "## Headline results" in md
    assert "| checklist | 0.5 [0.25, 0.75] | 0.7 [0.6, 0.8] |" in md
    assert "| -0.2 | [-0.4, -0.05] |" in md
    # breakdowns are their own tables, not repeated as protocol results
    assert "by_gender.female" not in md and "latency.total_s" not in md


def test_html_shows_the_same_tables() -> None:
    page = render_html(summary())
    assert "<h3>By engine</h3>" in page and "<h3>Judge reliability</h3>" in page
    assert "<td>total_s</td><td>1.25</td><td>2.5</td>" in page
