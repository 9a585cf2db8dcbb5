"""Corpus WER and median beside the mean: golden figures, the summaries of both protocols and
the report row."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.protocols.stored_runs import stored_context
from voxeval.analysis.aggregate import standard_summary
from voxeval.analysis.corpus_wer import add_corpus_wer, corpus_wer_fields
from voxeval.protocols.live_call import LiveCallProtocol
from voxeval.protocols.single_turn_summary import summarize_single_turn
from voxeval.report.markdown import render_markdown
from voxeval.store.records import ScoreRow


def wer_row(
    item: str,
    errors: int | None,
    ref_words: int | None,
    *,
    metric: str = "wer",
    condition: str = "clean",
    system: str = "s",
    value: float | None = None,
    error: str | None = None,
) -> ScoreRow:
    details: dict[str, Any] = {}
    if errors is not None:
        details = {"errors": errors, "ref_words": ref_words}
    if value is None and errors is not None and ref_words:
        value = errors / ref_words
    return ScoreRow(
        item_id=item, system=system, trial=0, condition=condition, category="II",
        metric=metric, value=None if error else value, passed=None, error=error,
        details=details,
    )  # fmt: skip


# One short reply with many insertions (WER 6.0) and two long, nearly perfect ones.
OUTLIER_ROWS = [wer_row("a", 18, 3), wer_row("b", 1, 20), wer_row("c", 0, 17)]


def test_corpus_wer_pools_errors_over_reference_words() -> None:
    fields = corpus_wer_fields(OUTLIER_ROWS)
    assert fields["errors"] == 19 and fields["ref_words"] == 40
    assert fields["wer_corpus"] == pytest.approx(19 / 40)
    assert fields["median"] == pytest.approx(0.05)
    assert fields["wer_corpus_missing"] == 0
    mean = sum(r.value or 0.0 for r in OUTLIER_ROWS) / 3
    assert mean == pytest.approx(2.0167, abs=1e-4)  # what the mean alone would report


def test_units_without_counts_are_counted_not_dropped() -> None:
    rows = [
        *OUTLIER_ROWS,
        wer_row("d", None, None, value=1.0),  # e.g. the failure value of a system fault
        wer_row("e", None, None, error="the reply has no audio"),  # not run: not a unit here
    ]
    fields = corpus_wer_fields(rows)
    assert fields["wer_corpus"] == pytest.approx(19 / 40)
    assert fields["wer_corpus_missing"] == 1
    assert fields["median"] == pytest.approx((0.05 + 1.0) / 2)
    assert corpus_wer_fields([wer_row("d", None, None, value=1.0)])["wer_corpus"] is None
    assert corpus_wer_fields([])["median"] is None


def test_added_beside_the_mean_overall_and_by_condition() -> None:
    rows = [
        *OUTLIER_ROWS,
        wer_row("a", 2, 4, condition="human_noise"),
        wer_row("b", 0, 6, condition="human_noise"),
        wer_row("a", 3, 3, system="t"),
    ]
    summary = standard_summary(rows, ["wer"], seed=0)
    add_corpus_wer(summary, rows, "wer")
    overall = summary["s"]["overall"]["wer"]
    assert overall["wer_corpus"] == pytest.approx(21 / 50)
    assert overall["median"] == pytest.approx(0.05)
    assert overall["mean"] == pytest.approx((6.0 + 0.05 + 0.0 + 0.5 + 0.0) / 5)
    noisy = summary["s"]["by_condition"]["human_noise"]["wer"]
    assert noisy["wer_corpus"] == pytest.approx(2 / 10) and noisy["median"] == 0.25
    assert summary["s"]["by_condition"]["clean"]["wer"]["wer_corpus"] == pytest.approx(19 / 40)
    assert summary["s"]["by_category"]["II"]["wer"]["errors"] == 21
    assert summary["t"]["overall"]["wer"]["wer_corpus"] == 1.0


def test_single_turn_summary_reports_corpus_wer(tmp_path: Path) -> None:
    ctx = stored_context(tmp_path, OUTLIER_ROWS, ["wer"])
    summary = summarize_single_turn(ctx, ["wer"], {}, {})
    stat = summary["s"]["overall"]["wer"]
    assert stat["wer_corpus"] == pytest.approx(19 / 40) and stat["median"] == pytest.approx(0.05)
    assert summary["s"]["by_condition"]["clean"]["wer"]["wer_corpus"] == pytest.approx(19 / 40)


def test_live_call_summary_reports_corpus_stt_wer(tmp_path: Path) -> None:
    rows = [
        wer_row("call-1", 4, 10, metric="stt_wer"),
        wer_row("call-2", 0, 30, metric="stt_wer"),
    ]
    summary = LiveCallProtocol().summarize(stored_context(tmp_path, rows, ["stt_wer"]))
    stat = summary["s"]["overall"]["stt_wer"]
    assert stat["wer_corpus"] == pytest.approx(4 / 40)
    assert stat["mean"] == pytest.approx(0.2) and stat["median"] == pytest.approx(0.2)


def test_report_shows_corpus_wer_and_median_in_the_wer_row() -> None:
    summary = standard_summary(OUTLIER_ROWS, ["wer"], seed=0)
    add_corpus_wer(summary, OUTLIER_ROWS, "wer")
    md = render_markdown({"run_id": "r", "suite": {"name": "demo"}, "systems": summary})
    assert "| wer (corpus 0.475, median 0.05) | 2.02 |" in md
    assert "| clean | wer (corpus 0.475, median 0.05) | 2.02 |" in md
