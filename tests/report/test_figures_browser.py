"""The report of a real tiny run opened from a file:// URL in headless Chromium: every
figure renders as a visible SVG, and the page makes no request other than its own file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.report.svg_checks import figure_tables
from tests.report.tiny_runs import live_call_run, multi_turn_run


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return live_call_run(tmp_path_factory.mktemp("live"))


def test_report_files_and_links(run_dir: Path) -> None:
    report = run_dir / "report"
    svgs = sorted(p.name for p in (report / "figures").glob("*.svg"))
    assert {"passk-curves.svg", "latency-histogram-response-latency-s.svg"} <= set(svgs)
    markdown = (report / "summary.md").read_text()
    for name in svgs:
        assert f"(figures/{name})" in markdown
    page = (report / "index.html").read_text()
    assert page.count('<figure class="report-figure"') == len(svgs)
    # the latency histogram counts every per-turn response latency the scores hold
    summary = json.loads((report / "summary.json").read_text())
    scores = [json.loads(p.read_text()) for p in run_dir.rglob("scores.json") if "items" in p.parts]
    per_turn = sum(
        len(((s.get("response_latency") or {}).get("details") or {}).get("per_turn_s") or [])
        for s in scores
    )
    hists = [
        e["distributions"]["latency"]["response_latency_s"] for e in summary["systems"].values()
    ]
    assert per_turn > 0 and sum(h["n"] for h in hists) == per_turn
    # the pass@k table under the figure is the summary's curve
    rows = figure_tables(page)["passk-curves"]
    good = summary["systems"]["good"]["pass_at_k"]
    assert [r[2] for r in rows if r[0] == "good pass@k"] == [p["mean"] for p in good]


def test_stale_figures_are_removed(run_dir: Path, tmp_path: Path) -> None:
    from voxeval.report.writer import write_figures

    folder = tmp_path / "report"
    (folder / "figures").mkdir(parents=True)
    (folder / "figures" / "old.svg").write_text("<svg/>")
    write_figures(folder, [])
    assert not (folder / "figures" / "old.svg").exists()


def open_offline(page: Any, run: Path) -> list[str]:
    """Open the run's index.html by file:// URL, every other request refused; returns the
    requests the page made. Every figure must be drawn, visible and of a readable size."""
    requests: list[str] = []

    def only_files(route: Any) -> None:
        url = route.request.url
        requests.append(url)
        if url.startswith("file://"):
            route.continue_()
        else:
            route.abort()

    page.route("**/*", only_files)
    page.goto((run / "report" / "index.html").as_uri())
    figures = page.locator("figure.report-figure")
    count = figures.count()
    assert count == len(list((run / "report" / "figures").glob("*.svg"))) > 0
    for i in range(count):
        svg = figures.nth(i).locator("svg")
        assert svg.is_visible()
        box = svg.bounding_box()
        assert box is not None and box["width"] > 200 and box["height"] > 100
    return requests


def test_figures_render_offline_from_file_url(run_dir: Path, page: Any) -> None:
    requests = open_offline(page, run_dir)
    index = run_dir / "report" / "index.html"
    passk = page.locator("#figure-passk-curves svg")
    assert passk.get_attribute("role") == "img"
    assert "pass@k" in passk.locator("title").text_content()
    # the data table opens under its figure
    page.locator("#figure-passk-curves summary").click()
    assert page.locator('#figure-passk-curves table[data-figure="passk-curves"]').is_visible()
    assert requests == [index.as_uri()]  # nothing but the page itself was requested


def test_multi_turn_arena_figures_render_offline(tmp_path: Path, page: Any) -> None:
    run = multi_turn_run(tmp_path)
    requests = open_offline(page, run)
    assert requests == [(run / "report" / "index.html").as_uri()]
    for name in ("radar-rubric-dimensions", "rubric-per-turn", "arena-win-rates-ambient",
                 "arena-bradley-terry-ambient"):  # fmt: skip
        assert page.locator(f"#figure-{name} svg").is_visible(), name
    # live beat recorded in the one ambient battle: its cell says so
    cell = page.locator("#arena-win-rates-ambient-cell-live-recorded")
    assert cell.count() == 1
