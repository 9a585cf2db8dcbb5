"""Reports: aggregation with bootstrap CIs, Markdown/CSV/JSON writers."""

from voxeval.analysis.aggregate import group_stats, metric_stats, standard_summary
from voxeval.report.html import render_html
from voxeval.report.markdown import render_markdown
from voxeval.report.writer import build_summary, write_report

__all__ = [
    "build_summary",
    "group_stats",
    "metric_stats",
    "render_html",
    "render_markdown",
    "standard_summary",
    "write_report",
]
