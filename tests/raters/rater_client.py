"""Driving the rater app over HTTP in tests (Starlette's TestClient, i.e. httpx)."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from tests.raters.study_builder import CLIP_S, csrf_of
from voxeval.raters.accounts import create_invites
from voxeval.raters.app import create_app


def start(study_dir: Path, db_url: str | None = None, **kwargs: Any) -> Any:
    return create_app(study_dir, db_url, **kwargs)


def invite(app: Any, role: str = "rater", count: int = 1) -> list[str]:
    site = app.state.site
    return [i.token for i in create_invites(site.engine, site.config.study_id, count, role=role)]  # type: ignore[arg-type]


def logged_in(app: Any, token: str, *, train: bool = True) -> TestClient:
    client = TestClient(app, follow_redirects=False)
    page = client.get("/login")
    response = client.post("/login", data={"token": token, "csrf_token": csrf_of(page.text)})
    assert response.status_code == 303, response.text
    if train:
        training = client.get("/training")
        assert (
            client.post("/training", data={"csrf_token": csrf_of(training.text)}).status_code == 303
        )
    return client


def next_assignment(client: TestClient) -> tuple[int, str]:
    """Open the next item page; returns its assignment id and HTML."""
    response = client.get("/")
    assert response.status_code == 303, response.text
    location = response.headers["location"]
    found = re.fullmatch(r"/item/(\d+)", location)
    assert found, location
    page = client.get(location)
    assert page.status_code == 200
    return int(found.group(1)), page.text


def clip_numbers(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'data-clip="(\d+)"', html)]


def clip_urls(html: str) -> list[str]:
    """The clip addresses the page plays, in page order."""
    return re.findall(r'<audio[^>]* src="(/clip/[^"]+)"', html)


def play_all(client: TestClient, assignment: int, html: str) -> None:
    """Play every clip at once, for its whole length (the server times the listening)."""
    csrf = csrf_of(html)

    def report(number: int, event: str, at: float) -> None:
        response = client.post(
            "/api/playback",
            json={"assignment": assignment, "clip": number, "event": event, "media_time": at},
            headers={"X-CSRF-Token": csrf},
        )
        assert response.status_code == 200, response.text

    numbers = clip_numbers(html)
    for number in numbers:
        report(number, "play", 0.0)
    time.sleep(CLIP_S)
    for number in numbers:
        report(number, "ended", CLIP_S)
