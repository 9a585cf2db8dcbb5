"""Screenshots of `voxeval view` for docs/viewer.md (docs/img/viewer-*.png): the tiny runs of
the viewer's tests, made in a temp folder, shown in headless Chromium.

    PYTHONPATH=src:. .venv/bin/python scripts/viewer_screenshots.py docs/img [NAME.png ...]

Names pick some of the shots (only the runs they show are made); none takes them all.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from playwright.sync_api import sync_playwright
from tests.report.compare_runs_fixtures import live_run, live_suite
from tests.support.browser import chromium_path
from tests.support.live_server import LiveServer
from tests.viewer import tiny_runs

from voxeval.viewer import create_app


def compare_runs_pair(root: Path) -> None:
    """Two runs of one suite: the second agent slips on most scenarios (a regression)."""
    suite = live_suite(root / "calls-suite")
    live_run(root, "calls-before", suite, "expected")
    live_run(root, "calls-after", suite, "wrong")


RUNS: dict[str, Callable[[Path], object]] = {
    "single": tiny_runs.single_turn_run,
    "live": tiny_runs.live_text_run,
    "audio": lambda root: tiny_runs.live_audio_run(root, embedded_asr=True),
    "compare": compare_runs_pair,
}
# name: (address, viewport height or None for the full page, runs it needs)
SHOTS: dict[str, tuple[str, int | None, tuple[str, ...]]] = {
    "viewer-runs.png": ("/", None, ("single", "live", "audio", "compare")),
    "viewer-units.png": ("/runs/live-run/units?metric=task_completion&sort=value", None, ("live",)),
    "viewer-unit.png": ("/runs/audio-run/units/1", 1500, ("audio",)),
    "viewer-compare.png": (
        "/compare?run=calls-before&run=calls-after&change=changed",
        1900,
        ("compare",),
    ),
}


def main(out: Path, names: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    shots = {name: SHOTS[name] for name in names} if names else SHOTS
    needed = dict.fromkeys(run for _, _, runs in shots.values() for run in runs)
    with tempfile.TemporaryDirectory(prefix="voxeval-shots-") as tmp:
        root = Path(tmp)
        for run in needed:
            RUNS[run](root)
        with LiveServer(create_app([], root)) as server, sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=chromium_path(), args=["--no-sandbox"]
            )
            page = browser.new_page(viewport={"width": 1100, "height": 760})
            for name, (url, height, _) in shots.items():
                page.set_viewport_size({"width": 1100, "height": height or 760})
                page.goto(server.url + url)
                page.screenshot(path=str(out / name), full_page=height is None)
                print(out / name, (out / name).stat().st_size // 1024, "KB")
            browser.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/img"), sys.argv[2:])
