"""Figures of the report, drawn from ``summary.json`` with matplotlib as inline SVG."""

from voxeval.report.figures.collect import build_figures
from voxeval.report.figures.svg import DataTable, Figure, FigureGroup

__all__ = ["DataTable", "Figure", "FigureGroup", "build_figures"]
