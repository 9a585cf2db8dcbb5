"""A user turn without a recording (transcript-only import) is passed to a live system as its
words alone; a system that needs the audio and refuses it does not score a failure of its
own: the unit fails on our side, cause ``input``, naming the turn."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from voxeval.cli.main import app


class _NeedsAudio(BaseHTTPRequestHandler):
    """A system endpoint that only answers a request carrying an audio file."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        status = 400 if b'name="audio"' not in body else 200
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(json.dumps({"error": "audio required"}).encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def needs_audio() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NeedsAudio)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/reply"
    server.shutdown()
    server.server_close()


def test_a_turn_without_recording_is_an_input_fault(tmp_path: Path, needs_audio: str) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    dialogue = {
        "id": "sem-1-1",
        "dimension": "semantic",
        "turns": [{"transcript": "plan a barbecue"}],  # no audio: transcript-only
    }
    (suite / "dialogues.jsonl").write_text(json.dumps(dialogue) + "\n", encoding="utf-8")
    header = {"name": "t", "protocol": "multi_turn", "dialogues": "dialogues.jsonl"}
    (suite / "suite.yaml").write_text(yaml.safe_dump(header), encoding="utf-8")
    config = {
        "suite": str(suite),
        "systems": [{"name": "live", "type": "http", "url": needs_audio, "max_retries": 0}],
        "metrics": [],
        "cache_dir": str(tmp_path / "cache"),
    }
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["run", str(tmp_path / "run.yaml"), "--out", str(out)])
    assert result.exit_code == 1, result.output
    summary = json.loads((out / "report" / "summary.json").read_text(encoding="utf-8"))
    units = summary["systems"]["live"]["units"]
    assert units["failed"] == 1 and units["failed_by_cause"] == {"input": 1}
    assert units["system_faults"] == {}  # not scored as the system's failure
    errors = " ".join(p.read_text() for p in out.rglob("error.txt"))
    assert "turn 1 has no recording (transcript-only)" in errors
