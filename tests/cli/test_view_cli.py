"""``voxeval view``: argument checks, the printed URL and the app it serves."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from voxeval.cli.main import app
from voxeval.store import RunStore


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    calls: dict[str, Any] = {}

    def fake_serve(application: Any, host: str, port: int) -> None:
        calls.update(app=application, host=host, port=port)

    monkeypatch.setattr("voxeval.web.serve", fake_serve)
    return calls


def test_view_serves_the_given_runs_and_prints_the_url(
    tmp_path: Path, served: dict[str, Any]
) -> None:
    RunStore(tmp_path / "one").close()
    result = CliRunner().invoke(app, ["view", str(tmp_path / "one"), "--port", "8123"])
    assert result.exit_code == 0, result.output
    assert "http://127.0.0.1:8123/" in result.output
    assert (served["host"], served["port"]) == ("127.0.0.1", 8123)
    with TestClient(served["app"]) as client:
        assert 'href="/runs/one"' in client.get("/").text


def test_view_of_a_folder_that_is_not_a_run_says_so(tmp_path: Path, served: dict[str, Any]) -> None:
    (tmp_path / "notes").mkdir()
    result = CliRunner().invoke(app, ["view", str(tmp_path / "notes")])
    assert result.exit_code == 2
    assert "not a voxeval run folder" in " ".join(result.output.split()) and not served


def test_view_without_runs_reads_the_root_and_picks_a_free_port(
    tmp_path: Path, served: dict[str, Any]
) -> None:
    result = CliRunner().invoke(app, ["view", "--root", str(tmp_path / "missing"), "--port", "0"])
    assert result.exit_code == 0, result.output
    assert served["port"] > 0 and f"http://127.0.0.1:{served['port']}/" in result.output
    assert "does not exist yet" in " ".join(result.output.split())
