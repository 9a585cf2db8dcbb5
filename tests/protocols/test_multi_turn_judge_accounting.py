"""The rubric judge's parse failures per dimension (summary.json ``judge.by_dimension`` and a
line of summary.md's judge reliability)."""

from __future__ import annotations

from voxeval.protocols.multi_turn_summary import judge_accounting
from voxeval.report.document import reliability_blocks
from voxeval.report.markdown import block_markdown
from voxeval.store.records import ScoreRow


def _row(item: str, dimension: str, metric: str, calls: int, failures: int) -> ScoreRow:
    details = {"judge_calls": calls, "parse_failures": failures}
    return ScoreRow(item, "s", 0, "clean", dimension, metric, 1.0, None, None, details)


def test_parse_failures_per_dimension() -> None:
    rows = [
        _row("sem-1", "semantic", "rubric", 2, 1),
        _row("sem-1", "semantic", "rubric_turns", 3, 0),
        _row("amb-1", "ambient", "rubric", 3, 2),
        _row("amb-1", "ambient", "content_density", 9, 9),  # not a rubric metric
    ]
    accounting = judge_accounting(rows)
    assert (accounting["calls"], accounting["parse_failures"]) == (8, 3)
    assert accounting["by_dimension"] == {
        "ambient": {"calls": 3, "parse_failures": 2},
        "semantic": {"calls": 5, "parse_failures": 1},
    }
    lines = [
        line for block in reliability_blocks(accounting, None) for line in block_markdown(block)
    ]
    assert "- parse failures by dimension: ambient 2 of 3 calls, semantic 1 of 5 calls" in lines
