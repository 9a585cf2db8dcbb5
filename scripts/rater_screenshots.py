"""Screenshots of the rater app for docs/raters.md: every page a rater or an admin sees.

    PYTHONPATH=src:. python scripts/rater_screenshots.py [--out docs/img]

Builds small studies with fixed texts and tone clips (same data every run), serves them on
127.0.0.1 and photographs the pages in headless Chromium (Debian's package, found the way the
test fixture finds it). Needs the `web` extra and playwright."""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import httpx
import numpy as np
import soundfile as sf
from tests.support.browser import chromium_path
from tests.support.live_server import LiveServer

from voxeval.raters.accounts import create_invites
from voxeval.raters.app import create_app
from voxeval.raters.study.study_files import StudyConfig, StudyItem, write_study

RATE = 16000
CLIP_S = 0.6
MIN_TIME_FACTOR = 0.2  # short waits for the voters behind the dashboard's numbers
PLAY_ALL = "Promise.all([...document.querySelectorAll('audio[data-clip]')].map(a => a.play()))"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1100, "height": 800}

ARENA_TITLES = [
    "Keeps the caller's date constraint across turns",
    "Answers a follow-up about the same booking",
    "Corrects itself when the caller changes the city",
    "Declines a request outside its remit politely",
    "Summarises the plan at the end of the call",
    "Handles an interruption mid-answer",
]


def _tone(path: Path, hz: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    t = np.arange(int(CLIP_S * RATE)) / RATE
    sf.write(str(path), (0.25 * np.sin(2 * np.pi * hz * t)).astype(np.float32), RATE)


def _clips(study: Path, item_id: str, roles: list[tuple[str, str, int | None]]) -> list[Any]:
    out = []
    for number, (sid, role, turn) in enumerate(roles):
        relative = f"audio/{item_id}/{sid}.wav"
        _tone(study / relative, 220 + 110 * number)
        out.append({"id": sid, "role": role, "turn": turn, "path": relative, "duration_s": CLIP_S})
    return out


def _study(folder: Path, task: str, **settings: Any) -> Path:
    rows: list[dict[str, Any]] = []
    if task == "arena":
        two_turns = [("u1", "user", 1), ("a1", "a", 1), ("b1", "b", 1)]
        two_turns += [("u2", "user", 2), ("a2", "a", 2), ("b2", "b", 2)]
        for index, title in enumerate(ARENA_TITLES):
            item_id = f"dialogue-{index + 1}"
            rows.append(
                {"item_id": item_id, "title": title, "dimension": "memory",
                 "stimuli": _clips(folder, item_id, two_turns),
                 "systems": {"a": "cascade-small", "b": "speech-to-speech-v2"}}
            )  # fmt: skip
        rows.append(
            {"item_id": "attention-1", "kind": "gold",
             "title": "Attention check: both replies are silent, so the answer is Both bad",
             "stimuli": _clips(folder, "attention-1", two_turns[:3]),
             "systems": {"a": "silence", "b": "silence"}, "gold": {"choice": "both_bad"}}
        )  # fmt: skip
    elif task == "rubric":
        rows.append(
            {"item_id": "dialogue-1", "title": "Multi-turn memory: the caller's dates",
             "context": "Listen to the whole dialogue, then tick each criterion the reply met.",
             "stimuli": _clips(folder, "dialogue-1", [("u1", "user", 1), ("r1", "reply", 1),
                                                      ("u2", "user", 2), ("r2", "reply", 2)]),
             "systems": {"reply": "cascade-small"},
             "criteria": [{"id": "dates", "text": "Keeps the dates the caller gave in turn 1"},
                          {"id": "city", "text": "Uses the corrected city, not the first one"},
                          {"id": "tone", "text": "Stays polite and concise"}]}
        )  # fmt: skip
    elif task == "score":
        rows.append(
            {"item_id": "query-1", "title": "How do I get from the airport to the old town?",
             "stimuli": _clips(folder, "query-1", [("q", "query", None), ("r", "reply", None)]),
             "systems": {"reply": "cascade-small"},
             "checklist": ["names a direct option (train or bus)", "gives a rough travel time",
                           "mentions where to buy a ticket"]}
        )  # fmt: skip
    else:
        rows.append(
            {"item_id": "prompt-1", "title": "Read the sentence aloud, at your normal pace",
             "prompt_text": "Could you move my dentist appointment to Thursday afternoon?"}
        )  # fmt: skip
    config = StudyConfig.model_validate(
        {"study_id": f"demo-{task}", "task": task, "title": f"Demo study ({task})", "seed": 7,
         **settings}
    )  # fmt: skip
    write_study(folder, config, [StudyItem.model_validate(r) for r in rows])
    return folder


def _token(app: Any, role: str = "rater", label: str | None = None) -> str:
    site = app.state.site
    [invite] = create_invites(site.engine, site.config.study_id, 1, role=role, label=label)  # type: ignore[arg-type]
    return invite.token


def _csrf(html: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert found, "no CSRF field"
    return found.group(1)


def _vote_over_http(url: str, token: str, choices: list[str], attentive: bool) -> None:
    """A rater who answers through HTTP (for the dashboard's numbers)."""
    with httpx.Client(base_url=url, follow_redirects=False, timeout=30) as client:
        page = client.get("/login")
        client.post("/login", data={"token": token, "csrf_token": _csrf(page.text)})
        training = client.get("/training")
        client.post("/training", data={"csrf_token": _csrf(training.text)})
        for choice in choices:
            home = client.get("/")
            if home.status_code != 303:
                return
            location = home.headers["location"]
            html = client.get(location).text
            assignment = int(location.rsplit("/", 1)[1])
            csrf = _csrf(html)
            for event, at in (("play", 0.0), ("ended", CLIP_S)):
                if event == "ended":
                    time.sleep(CLIP_S)  # the server times the listening
                for clip in re.findall(r'data-clip="(\d+)"', html):
                    client.post(
                        "/api/playback",
                        json={"assignment": assignment, "clip": int(clip), "event": event,
                              "media_time": at},
                        headers={"X-CSRF-Token": csrf},
                    )  # fmt: skip
            time.sleep(MIN_TIME_FACTOR * CLIP_S * html.count("data-clip=") + 0.05)
            if attentive and "Attention check" in html:
                choice = "both_bad"
            client.post(location, data={"csrf_token": csrf, "choice": choice})


def _log_in(page: Any, url: str, token: str, *, train: bool = True) -> None:
    page.goto(f"{url}/login?token={token}")
    page.wait_for_url(f"{url}/training")
    if train:
        page.click("#start")
        page.wait_for_url(f"{url}/item/*")


def _shot(page: Any, out: Path, name: str) -> None:
    page.wait_for_timeout(150)  # let fonts and layout settle
    path = out / f"rater-{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"{path} ({path.stat().st_size // 1024} KB)")


def _play_all(page: Any) -> None:
    page.evaluate(PLAY_ALL)
    page.wait_for_selector("[data-gated]:enabled", timeout=20000)


def take(out: Path) -> None:
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    if path is None:
        sys.exit("no Chromium found: apt-get install chromium (or set VOXEVAL_CHROMIUM)")
    out.mkdir(parents=True, exist_ok=True)
    with TemporaryDirectory() as tmp, sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=path,
            args=["--no-sandbox", "--autoplay-policy=no-user-gesture-required"],
        )
        root = Path(tmp)
        arena = create_app(
            _study(
                root / "arena",
                "arena",
                raters_per_item=3,
                gold_every=3,
                min_time_factor=MIN_TIME_FACTOR,
                rate_limit_per_minute=100,
            )
        )
        with LiveServer(arena) as server:
            page = browser.new_context(viewport=DESKTOP).new_page()
            page.goto(f"{server.url}/login")
            _shot(page, out, "login")
            _log_in(page, server.url, _token(arena), train=False)
            _shot(page, out, "training")
            page.click("#start")
            page.wait_for_url(f"{server.url}/item/*")
            _shot(page, out, "arena-before-playback")
            _play_all(page)
            page.fill("#reason", "B forgot the dates I gave in the first turn.")
            _shot(page, out, "arena-after-playback")
            page.click("#vote-a")
            page.wait_for_url(f"{server.url}/item/*/reveal")
            _shot(page, out, "arena-reveal")

            phone = browser.new_context(viewport=PHONE, is_mobile=True).new_page()
            _log_in(phone, server.url, _token(arena))
            _shot(phone, out, "arena-phone")

            for label, choices in (("lab-a", ["a", "a", "b", "tie", "a"]),
                                   ("lab-b", ["a", "b", "b", "a", "a"]),
                                   ("online-c", ["b", "b", "both_bad", "b", "b"])):  # fmt: skip
                attentive = label != "online-c"
                _vote_over_http(server.url, _token(arena, label=label), choices, attentive)
            admin = browser.new_context(viewport=DESKTOP).new_page()
            admin.goto(f"{server.url}/login?token={_token(arena, role='admin')}")
            admin.wait_for_url(f"{server.url}/admin")
            _shot(admin, out, "admin")
        arena.state.site.engine.dispose()

        for task in ("rubric", "score", "record"):
            app = create_app(_study(root / task, task))
            with LiveServer(app) as server:
                page = browser.new_context(viewport=DESKTOP).new_page()
                _log_in(page, server.url, _token(app))
                if task != "record":
                    _play_all(page)
                _shot(page, out, task)
            app.state.site.engine.dispose()
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/img"))
    take(parser.parse_args().out)


if __name__ == "__main__":
    main()
