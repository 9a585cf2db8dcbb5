"""Reports of a run (summary.json, Markdown, HTML and CSV writers), comparisons of runs and
leaderboards."""

from voxeval.report.compare_document import (
    comparison_blocks,
    render_comparison_html,
    render_comparison_markdown,
    write_comparison,
)
from voxeval.report.html import render_html
from voxeval.report.leaderboard import Leaderboard, build_leaderboard, write_leaderboard
from voxeval.report.markdown import render_markdown
from voxeval.report.run_compare import RunComparison, compare_runs
from voxeval.report.writer import build_summary, write_report

__all__ = [
    "Leaderboard",
    "RunComparison",
    "build_leaderboard",
    "build_summary",
    "compare_runs",
    "comparison_blocks",
    "render_comparison_html",
    "render_comparison_markdown",
    "render_html",
    "render_markdown",
    "write_comparison",
    "write_leaderboard",
    "write_report",
]
