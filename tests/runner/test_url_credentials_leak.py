"""Credentials in an endpoint URL (``http://user:pass@host``) travel as ``Authorization:
Basic base64(user:pass)``. A server that echoes its request headers, in an error or in a
reply, must not get any form of them into the run folder, the cache or the output."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse
from tests.runner.executor_world import World, index_rows, run_cli, single_turn_config
from voxeval.redaction import REDACTED, forget_registered_secrets, redact_text

USER, PASSWORD = "runner", "pw4Zq"  # shorter than any value redacted by value alone


def forms() -> list[str]:
    token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    return [PASSWORD, f"{USER}:{PASSWORD}", token, token.rstrip("="), quote(token, safe="")]


class EchoingWorld(World):
    """The scripted world whose voice system echoes the Authorization header it received:
    in a 400 error for q0, in the reply text for q1."""

    def __init__(self) -> None:
        super().__init__()
        self.server: FakeOpenAIServer | None = None

    def __call__(self, path: str, body: Any) -> FakeResponse:
        assert self.server is not None
        headers = self.server.requests[-1].headers
        sent = headers.get("Authorization") or headers.get("authorization") or ""
        decoded = base64.b64decode(sent.split()[-1]).decode() if sent else ""
        echoed = f"you sent {sent!r} = {decoded!r} ({quote(sent.split()[-1], safe='')})"
        if path.endswith("/reply") and isinstance(body, bytes) and b"q0__" in body:
            return FakeResponse(status=400, json_body={"error": {"message": echoed}})
        answer = super().__call__(path, body)
        if path.endswith("/reply") and isinstance(body, bytes) and b"q1__" in body:
            answer.json_body["text"] = echoed
        return answer


def test_basic_auth_forms_are_redacted_from_text() -> None:
    forget_registered_secrets()
    from voxeval.redaction import register_config_secrets

    register_config_secrets({"url": f"http://{USER}:{PASSWORD}@h.example/v1"})
    token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    text = redact_text(f"header Basic {token}; pair {USER}:{PASSWORD}; {quote(token, safe='')}")
    assert text == f"header {REDACTED}; pair {REDACTED}; {REDACTED}"


@pytest.mark.models
def test_no_form_of_url_credentials_reaches_any_output(tmp_path: Path) -> None:
    forget_registered_secrets()
    world = EchoingWorld()
    with FakeOpenAIServer(world) as server:
        world.server = server
        url = server.url.replace("http://", f"http://{USER}:{PASSWORD}@")
        # q0 and q1 (``limit``): the two echoes; the report's input check (Whisper base and
        # DNSMOS on every query) needs no more
        config = single_turn_config(
            tmp_path, url, metrics=["assertions", "wer", "duration"], concurrency=1, limit=2
        )
        result = run_cli(config, tmp_path / "run")
        sent = [r.headers.get("Authorization", "") for r in server.posts("/reply")]
    assert result.exit_code == 1, result.output  # q0 failed as the system's fault
    token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    assert f"Basic {token}" in sent  # the credentials were really sent as Basic auth
    (error,) = index_rows(tmp_path / "run", "SELECT error FROM units WHERE error IS NOT NULL")
    assert "HTTP 400" in error[0] and REDACTED in error[0], error
    reply = json.dumps([json.loads(p.read_text()) for p in (tmp_path / "run").rglob("reply.json")])
    assert "you sent" in reply and REDACTED in reply
    leaks = []
    for path in [*(tmp_path / "run").rglob("*"), *(tmp_path / "cache").rglob("*")]:
        if path.is_file():
            data = path.read_bytes()
            leaks += [f"{path.name}: {f}" for f in forms() if f.encode() in data]
    leaks += [f"output: {f}" for f in forms() if f in result.output]
    assert leaks == []
    assert (tmp_path / "run" / "report" / "index.html").is_file()
    assert (tmp_path / "run" / "index.sqlite").is_file()
