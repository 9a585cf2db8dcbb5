"""The data table under every figure holds the summary's numbers exactly (read back from the
HTML page), and the same summary gives the same bytes, in this process and in another."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.report.figure_summaries import live_call_summary, multi_turn_summary, single_turn_summary
from tests.report.svg_checks import figure_tables
from voxeval.report.figures import build_figures
from voxeval.report.html import render_html


def numbers(value: Any) -> Iterator[float]:
    """Every float leaf of a JSON-like value."""
    if isinstance(value, float):
        yield value
    elif isinstance(value, dict):
        for inner in value.values():
            yield from numbers(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from numbers(inner)


MAKERS = {
    "single_turn": single_turn_summary,
    "live_call": live_call_summary,
    "multi_turn": multi_turn_summary,
}


def read_back(kind: str) -> dict[str, Any]:
    """The summary as read back from summary.json."""
    return json.loads(json.dumps(MAKERS[kind]()))


@functools.cache
def rendered(kind: str) -> str:
    """The report page of one kind's summary, drawn once per module (matplotlib takes
    seconds); tests that need a second drawing make it themselves."""
    return render_html(read_back(kind))


@pytest.fixture(scope="module", params=list(MAKERS))
def page_and_summary(request: pytest.FixtureRequest) -> tuple[str, dict[str, Any]]:
    return rendered(request.param), read_back(request.param)


def test_every_table_number_is_a_summary_number(
    page_and_summary: tuple[str, dict[str, Any]],
) -> None:
    page, summary = page_and_summary
    tables = figure_tables(page)
    assert tables and all(tables.values())
    known = set(numbers(summary))
    for name, rows in tables.items():
        for row in rows:
            for cell in row:
                if isinstance(cell, float):
                    assert cell in known, (name, row)


def test_tables_match_the_summary_row_by_row(
    page_and_summary: tuple[str, dict[str, Any]],
) -> None:
    page, summary = page_and_summary
    tables = figure_tables(page)
    systems = summary["systems"]
    protocol = summary["suite"]["protocol"]
    if protocol == "single_turn":
        for system, group, mean, low, high, n in tables["category-bars-checklist"]:
            stat = systems[system]["by_category"][group]["checklist"]
            assert [mean, low, high, n] == [
                stat["mean"],
                stat["ci_low"],
                stat["ci_high"],
                str(stat["n"]),
            ]
        rows = tables["mos-distribution"]
        for system, entry in systems.items():
            hist = entry["distributions"]["mos"]
            assert sum(int(r[3]) for r in rows if r[0] == system) == hist["n"]
    elif protocol == "live_call":
        for series, k, mean, low, high, _ in tables["passk-curves"]:
            system, label = series.rsplit(" ", 1)
            key = "pass_at_k" if label == "pass@k" else "pass_hat_k"
            point = systems[system][key][int(k) - 1]
            assert [mean, low, high] == [point["mean"], point["ci_low"], point["ci_high"]]
        for row in tables["eva-pareto"]:
            a = systems[row[0]]["composites"]["eva_a"]["by_condition"]["clean"]["pass_at_1"]
            assert row[1:4] == [a["mean"], a["ci_low"], a["ci_high"]]
    else:
        for system, opponent, rate, *_ in tables["arena-win-rates-ambient"]:
            matrix = summary["arena"]["dimensions"]["ambient"]["win_matrix"]
            assert rate == matrix[system][opponent]["win_rate"]
        for system, turn, mean, *_ in tables["rubric-per-turn"]:
            assert mean == systems[system]["rubric"]["turns"][turn]["mean"]


def test_no_interval_is_shown_as_none() -> None:
    rows = figure_tables(rendered("live_call"))["latency-by-turn-response-latency-s"]
    t3 = [row for row in rows if row[1] == "T3"]
    assert len(t3) == 3 and all(row[3:5] == ["–", "–"] for row in t3)  # all values equal


SCRIPT = (
    "import hashlib, sys\n"
    "from tests.report.figure_summaries import live_call_summary\n"
    "from voxeval.report.figures.collect import eva_figures\n"
    "figure = eva_figures(live_call_summary()['systems']).figures[0]\n"
    "print(hashlib.sha256(figure.svg.encode()).hexdigest())\n"
)


def test_same_summary_same_bytes() -> None:
    first = rendered("live_call")
    assert render_html(read_back("live_call")) == first  # drawn a second time
    assert "<dc:date>" not in first  # no creation date in any figure


@pytest.mark.slow  # a fresh interpreter imports voxeval and matplotlib (~8 s idle)
def test_same_bytes_in_another_process() -> None:
    import hashlib

    other = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True
    ).stdout.strip()
    pareto = next(f.svg for g in build_figures(live_call_summary()) for f in g.figures
                  if f.name == "eva-pareto")  # fmt: skip
    assert other == hashlib.sha256(pareto.encode()).hexdigest()
