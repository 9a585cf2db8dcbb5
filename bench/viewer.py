"""How fast `voxeval view` opens a large run: a generated 10,000-unit run (RunStore API,
synthetic scores, a recording every 50th unit) in a temp folder, the viewer on 127.0.0.1,
then timed HTTP requests:

- cold open: app creation plus the time to the first byte of the run page (target < 2 s);
- 20 unit-table pages with filters and sorts (mean and p95; target < 200 ms each);
- a few unit pages (with a waveform and timeline).

Last line: ``table_page_p95_over_budget: R`` (p95 / 200 ms; below 1 meets the target).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
from bench_args import parser_for  # bench/, the script's folder

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for tests.*

from tests.support.live_server import LiveServer
from tests.viewer.synthetic_run import synthetic_run

from voxeval.viewer import create_app

UNITS = 10_000
TABLE_QUERIES = [
    "",
    "page=2",
    "page=150",
    "system=beta",
    "status=failed",
    "status=pending",
    "category=billing&condition=street_noise",
    "metric=task_completion&outcome=fail",
    "metric=task_completion&outcome=pass&system=alpha",
    "metric=response_latency&sort=value&order=desc",
    "metric=response_latency&sort=value&page=40",
    "metric=faithfulness&outcome=not_run",
    "sort=failed_metrics&order=desc",
    "sort=item&order=desc&per_page=200",
    "outcome=fail",
    "outcome=pass&page=10",
    "q=item-0420",
    "sort=status&page=50",
    "system=alpha&metric=faithfulness&sort=value&per_page=100&page=20",
    "per_page=200&page=50",
]


def ttfb(client: httpx.Client, url: str) -> float:
    """Seconds until the response's first body bytes arrive."""
    start = time.perf_counter()
    with client.stream("GET", url) as response:
        response.raise_for_status()
        chunks = response.iter_raw()
        next(chunks)
        elapsed = time.perf_counter() - start
        for _ in chunks:  # the rest of the page
            pass
    return elapsed


def main(units: int) -> None:
    with tempfile.TemporaryDirectory(prefix="voxeval-viewer-bench-") as tmp:
        started = time.perf_counter()
        run = synthetic_run(Path(tmp) / "big-run", units, seed=0)
        print(f"generated {run.units} units in {time.perf_counter() - started:.1f} s "
              f"({run.failed} failed, {run.pending} pending)", file=sys.stderr)  # fmt: skip
        start = time.perf_counter()
        app = create_app([], Path(tmp))
        created = time.perf_counter() - start
        with LiveServer(app) as server, httpx.Client(base_url=server.url, timeout=30) as client:
            first = ttfb(client, "/runs/big-run")
            open_s = created + first
            first_table = ttfb(client, "/runs/big-run/units")
            pages = [ttfb(client, f"/runs/big-run/units?{q}") for q in TABLE_QUERIES]
            unit_pages = [
                ttfb(client, f"/runs/big-run/units/{n}") for n in (1, 51, 101, units // 2 + 1)
            ]
    for query, seconds in sorted(zip(TABLE_QUERIES, pages, strict=True), key=lambda qs: -qs[1])[:3]:
        print(f"  slowest: {seconds * 1000:.1f} ms  ?{query}", file=sys.stderr)
    mean = statistics.fmean(pages)
    p95 = statistics.quantiles(pages, n=20, method="inclusive")[-1]
    print(f"units: {units}")
    print(f"run page cold open (app creation {created * 1000:.0f} ms + first byte "
          f"{first * 1000:.0f} ms): {open_s * 1000:.0f} ms (target < 2000 ms)")  # fmt: skip
    print(f"first unit-table page: {first_table * 1000:.1f} ms")
    print(f"unit-table pages ({len(pages)}, filters and sorts): mean {mean * 1000:.1f} ms, "
          f"p95 {p95 * 1000:.1f} ms, max {max(pages) * 1000:.1f} ms (target < 200 ms)")  # fmt: skip
    print(f"unit pages: mean {statistics.fmean(unit_pages) * 1000:.1f} ms")
    print(f"run_open_over_budget: {open_s / 2.0:.3f}")
    print(f"table_page_p95_over_budget: {p95 / 0.2:.3f}")


if __name__ == "__main__":
    parser = parser_for(__doc__)
    parser.add_argument("units", nargs="?", type=int, default=UNITS, help=f"(default {UNITS})")
    main(parser.parse_args().units)
