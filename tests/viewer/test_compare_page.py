"""The viewer's compare page over real runs of one suite (scripted agent and caller): the
numbers are ``compare_runs``'s, the regression is marked, item deltas link to both units,
a comparison across suites is refused with its reason, and re-opening hits the cache."""

from __future__ import annotations

import html as html_lib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.report.compare_runs_fixtures import SCENARIOS, UNCHANGED, live_run, live_suite
from tests.support.live_server import LiveServer
from voxeval.report.run_compare import compare_runs
from voxeval.viewer import create_app
from voxeval.viewer.run_comparison import PER_PAGE, ItemQuery, item_page, item_rows


@pytest.fixture(scope="module")
def compare_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """before (expected agent), after (slips on 10 of 12 scenarios), other (another suite)."""
    root = tmp_path_factory.mktemp("compare-runs")
    suite = live_suite(root / "suite")
    other = live_suite(root / "other-suite", name="other-calls", ids=["s01"])
    live_run(root, "before", suite, "expected")
    live_run(root, "after", suite, "wrong")
    live_run(root, "other", other, "expected")
    return root


@pytest.fixture(scope="module")
def compare_client(compare_root: Path) -> Iterator[Any]:
    with TestClient(create_app([], compare_root)) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def expected(compare_root: Path) -> dict[str, Any]:
    """``compare_runs`` of before and after, computed here, not by the viewer."""
    return compare_runs([compare_root / "before", compare_root / "after"]).to_dict()


def _rows(html: str, table_id_or_class: str) -> list[str]:
    table = re.search(
        rf'<table[^>]*(?:id|class)="{table_id_or_class}"[^>]*>.*?</table>', html, flags=re.S
    )
    assert table is not None, table_id_or_class
    return re.findall(r"<tr\b[^>]*data-[^>]*>.*?</tr>", table.group(0), flags=re.S)


def _attr(row: str, name: str) -> str:
    found = re.search(rf'{name}="([^"]*)"', row)
    assert found is not None, name
    return html_lib.unescape(found.group(1))


def _float(text: str) -> float | None:
    return None if text == "None" else float(text)


def test_page_shows_compare_runs_numbers_and_marks_the_regression(
    compare_client: Any, expected: dict[str, Any]
) -> None:
    page = compare_client.get("/compare?run=before&run=after")
    assert page.status_code == 200
    html = page.text
    metrics = expected["systems"]["agent"]["metrics"]
    # means [CI] per run, exactly the comparison's
    means = _rows(html, "compare-means")
    assert [_attr(r, "data-metric") for r in means] == list(metrics)
    for row in means:
        cells = re.findall(r'data-mean="([^"]*)" data-ci-low="([^"]*)" data-ci-high="([^"]*)"', row)
        runs = metrics[_attr(row, "data-metric")]["runs"]
        assert [tuple(_float(v) for v in cell) for cell in cells] == [
            (s["mean"], s["ci_low"], s["ci_high"]) for s in runs.values()
        ]
    # paired tests: delta, p, Holm p and flag per metric
    tests = _rows(html, "compare-tests")
    assert len(tests) == len(metrics)
    for row in tests:
        c = metrics[_attr(row, "data-metric")]["comparisons"][0]
        assert _float(_attr(row, "data-delta")) == c["delta"]["mean"]
        assert _float(_attr(row, "data-p")) == c["p_value"]
        assert _float(_attr(row, "data-p-holm")) == c["p_holm"]
        assert _attr(row, "data-flag") == (c["flag"] or "")
    flagged = [r for r in tests if _attr(r, "data-flag")]
    assert [_attr(r, "data-metric") for r in flagged] == ["task_completion"]
    assert flagged[0].startswith('<tr class="regression"') and "▼ regression" in flagged[0]
    assert "▲" not in "".join(tests)  # nothing improved
    # the means cell of the regressed run is red too
    tc_means = next(r for r in means if _attr(r, "data-metric") == "task_completion")
    assert tc_means.count('class="num regression"') == 1


def test_item_deltas_equal_the_comparison_and_link_both_units(
    compare_client: Any, compare_root: Path
) -> None:
    page = compare_client.get(
        "/compare?run=before&run=after&metric=task_completion&sort=item&order=asc"
    )
    rows = _rows(page.text, "item-deltas")
    assert [_attr(r, "data-item") for r in rows] == SCENARIOS
    for row in rows:
        item = _attr(row, "data-item")
        assert float(_attr(row, "data-delta")) == (0.0 if item in UNCHANGED else -1.0)
        assert ("▼ worse" in row) == (item not in UNCHANGED)
        assert row.startswith('<tr class="regression"') == (item not in UNCHANGED)
    first = rows[0]
    baseline_url = re.search(r'href="([^"]+)" class="unit-baseline"', first).group(1)
    run_url = re.search(r'href="([^"]+)" class="unit-run"', first).group(1)
    assert baseline_url.startswith("/runs/before/units/") and run_url.startswith("/runs/after/")
    for url in (baseline_url, run_url):
        unit = compare_client.get(url)
        assert unit.status_code == 200 and "s01" in unit.text and "agent" in unit.text
    # filters: only the worse items of the slipped metric
    worse = compare_client.get("/compare?run=before&run=after&metric=task_completion&change=worse")
    assert len(_rows(worse.text, "item-deltas")) == len(SCENARIOS) - len(UNCHANGED)


def test_item_table_pages_and_sorts_worst_first() -> None:
    data = {
        "systems": {
            "s": {
                "metrics": {
                    "m": {
                        "better": "higher",
                        "comparisons": [
                            {
                                "run": "b",
                                "baseline": "a",
                                "items": [
                                    {"item_id": f"i{n:03d}", "condition": "clean",
                                     "cluster": f"i{n:03d}", "baseline": 1.0,
                                     "value": 1.0 - n / 100, "delta": -n / 100}
                                    for n in range(120)
                                ],
                            }
                        ],
                    }
                }
            }
        }
    }  # fmt: skip
    rows = item_rows(data)
    first = item_page(rows, ItemQuery())
    assert first.total == 120 and first.pages == 3 and len(first.rows) == PER_PAGE
    assert first.rows[0]["item"] == "i119" and first.rows[0]["change"] == "worse"
    last = item_page(rows, ItemQuery(page=9))  # past the end: the last page
    assert last.query.page == 3 and [r["item"] for r in last.rows][-1] == "i000"
    assert last.rows[-1]["change"] == "same" and first.changed_total == 119
    ascending = item_page(rows, ItemQuery(sort="delta", order="asc", q="i11"))
    assert [r["item"] for r in ascending.rows] == [f"i{n}" for n in range(119, 109, -1)]


def test_json_equals_compare_runs_and_reopening_uses_the_cache(
    compare_root: Path, expected: dict[str, Any]
) -> None:
    app = create_app([], compare_root)
    with TestClient(app) as client:
        assert client.get("/compare.json?run=before&run=after").json() == expected
        assert client.get("/compare?run=before&run=after&page=2").status_code == 200
        assert app.state.comparisons.computed == 1  # the second request was a cache hit
        (compare_root / "after" / "run.yaml").touch()  # the run changed: computed again
        assert client.get("/compare.json?run=before&run=after").json() == expected
        assert app.state.comparisons.computed == 2


def test_different_suites_are_refused_with_the_reason(compare_client: Any) -> None:
    page = compare_client.get("/compare?run=before&run=other")
    assert page.status_code == 400
    error = re.search(r'id="compare-error".*?</div>', page.text, flags=re.S).group(0)
    assert "mini-calls" in error and "other-calls" in error
    refused = compare_client.get("/compare.json?run=before&run=other")
    assert refused.status_code == 400 and "other-calls" in refused.json()["error"]
    one = compare_client.get("/compare?run=before")
    assert one.status_code == 400 and "at least two runs" in one.text
    assert compare_client.get("/compare?run=before&run=nope").status_code == 404
    empty = compare_client.get("/compare")
    assert empty.status_code == 200 and 'id="compare-help"' in empty.text


def test_runs_list_offers_a_checkbox_per_run(compare_client: Any) -> None:
    html = compare_client.get("/").text
    assert 'action="/compare"' in html
    ticks = re.findall(r'<input type="checkbox" name="run" value="([^"]+)"', html)
    assert sorted(ticks) == ["after", "before", "other"]


def test_tick_two_runs_press_compare_and_see_the_regression(page: Any, compare_root: Path) -> None:
    with LiveServer(create_app([], compare_root)) as server:
        page.goto(server.url + "/")
        button = page.locator("#compare-button")
        assert button.is_disabled()
        page.get_by_label("compare before").check()
        page.get_by_label("compare after").check()
        assert button.is_enabled()
        button.click()
        page.wait_for_url("**/compare?run=before&run=after")  # the older run is the baseline
        row = page.locator("table.compare-tests tr.regression")
        assert row.count() == 1
        assert "task_completion" in row.inner_text() and "▼ regression" in row.inner_text()
        colour = row.locator("td").first.evaluate("td => getComputedStyle(td).backgroundColor")
        assert colour == "rgb(253, 226, 225)"
