"""Screenshots of `voxeval view` for docs/viewer.md (docs/img/viewer-*.png): the tiny runs of
the viewer's tests, made in a temp folder, shown in headless Chromium.

    PYTHONPATH=src:. .venv/bin/python scripts/viewer_screenshots.py docs/img
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright
from tests.support.browser import chromium_path
from tests.support.live_server import LiveServer
from tests.viewer import tiny_runs

from voxeval.viewer import create_app

SHOTS = {
    "viewer-runs.png": ("/", None),
    "viewer-units.png": ("/runs/live-run/units?metric=task_completion&sort=value", None),
    "viewer-unit.png": ("/runs/audio-run/units/1", 1500),
}


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="voxeval-shots-") as tmp:
        root = Path(tmp)
        tiny_runs.single_turn_run(root)
        tiny_runs.live_text_run(root)
        tiny_runs.live_audio_run(root, embedded_asr=True)
        with LiveServer(create_app([], root)) as server, sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=chromium_path(), args=["--no-sandbox"]
            )
            page = browser.new_page(viewport={"width": 1100, "height": 760})
            for name, (url, height) in SHOTS.items():
                page.goto(server.url + url)
                if height:
                    page.set_viewport_size({"width": 1100, "height": height})
                page.screenshot(path=str(out / name), full_page=height is None)
                print(out / name, (out / name).stat().st_size // 1024, "KB")
            browser.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/img"))
