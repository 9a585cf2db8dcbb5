"""Reports of a run: summary.json, Markdown, HTML and CSV writers."""

from voxeval.report.html import render_html
from voxeval.report.markdown import render_markdown
from voxeval.report.writer import build_summary, write_report

__all__ = ["build_summary", "render_html", "render_markdown", "write_report"]
