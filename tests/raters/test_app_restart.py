"""A killed server loses nothing: `voxeval raters serve` in a subprocess takes votes, is
killed with SIGKILL, and restarted on the same database it still has every vote it
acknowledged (and keeps assigning new items)."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, select
from typer.testing import CliRunner

from tests.raters.rater_client import play_all
from tests.raters.serve_process import serve
from tests.raters.study_builder import csrf_of, make_study
from voxeval.cli.main import app
from voxeval.raters.database import database_url, open_database
from voxeval.raters.schema import responses_table
from voxeval.web import free_port


def _vote(client: httpx.Client) -> int:
    response = client.get("/")
    assert response.status_code == 303, response.text
    location = response.headers["location"]
    html = client.get(location).text
    assignment = int(location.rsplit("/", 1)[1])
    play_all(client, assignment, html)  # type: ignore[arg-type]
    answer = client.post(location, data={"csrf_token": csrf_of(html), "choice": "tie"})
    assert answer.status_code == 303, answer.text  # acknowledged = committed
    return assignment


@pytest.mark.slow  # two server start-ups: ~15 s on a busy machine
def test_killed_server_keeps_every_acknowledged_vote(tmp_path: Path) -> None:
    study = make_study(tmp_path / "study", "arena", items=6, min_time_factor=0)
    invited = CliRunner().invoke(app, ["raters", "invite", str(study), "--count", "1"])
    assert invited.exit_code == 0, invited.output
    rater_id, role, token = invited.stdout.strip().splitlines()[0].split("\t")
    assert role == "rater" and rater_id.startswith("rater-") and len(token) >= 32

    port = free_port()
    process, url = serve(study, port, log=tmp_path / "first.log")
    try:
        client = httpx.Client(base_url=url, follow_redirects=False)
        login = client.get("/login")
        client.post("/login", data={"token": token, "csrf_token": csrf_of(login.text)})
        training = client.get("/training")
        client.post("/training", data={"csrf_token": csrf_of(training.text)})
        voted = [_vote(client) for _ in range(3)]
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    assert process.returncode == -signal.SIGKILL
    logged = (tmp_path / "first.log").read_text()
    assert "study 'pilot' (arena)" in logged  # the start-up line
    assert token not in logged  # never logged, not even in request lines

    engine = open_database(database_url(study, None))
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(responses_table)).scalar_one() == 3
    engine.dispose()

    process, url = serve(study, port, log=tmp_path / "second.log")
    try:
        assert httpx.get(url + "healthz").json()["answers"] == 3
        client = httpx.Client(base_url=url, follow_redirects=False, cookies=client.cookies)
        fourth = _vote(client)  # the session survived; the next item is a new one
        assert fourth not in voted
        assert httpx.get(url + "healthz").json()["answers"] == 4
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
