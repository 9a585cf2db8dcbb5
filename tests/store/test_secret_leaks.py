"""Keys planted everywhere a loopback server could echo them never reach the run folder, the
call cache or the terminal (``voxeval run``, ``score`` and ``report`` through the CLI)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from tests.support.query_clips import QUERY_SECONDS
from voxeval.audio import Audio, audio_to_wav_bytes, write_audio
from voxeval.cli.main import app
from voxeval.redaction import REDACTED

# Distinct long values, each behind an environment variable whose *name* does not look secret
# (so only the config's references can tell voxeval they are secrets), or written in the config.
SYSTEM_HEADER = "hdr-7Qv2Lx9KpR4mZt8WcY3nB6sD"  # headers_env: {Authorization: WEB_HDR}
URL_TOKEN = "urltok-J5hG2fK8sL1qW9eR3tY6uI0p"  # in the system's url ?token=
JUDGE_KEY = "jdg-Xc4Vb7Nm1Qa8Sd5Fg2Hj6Kl9Zx3"  # judge api_key_env: JUDGE_CRED
EXTRA_TOKEN = "xtra-Pl0Ok9Ij8Uh7Yg6Tf5Rd4Es3Wa"  # judge extra_body.metadata.session_token
ASR_KEY = "asr-Mn2Bv3Cx4Zl5Kj6Hg7Fd8Sa9Qw0"  # asr api_key_env: ASR_CRED
SECRETS = (SYSTEM_HEADER, URL_TOKEN, JUDGE_KEY, EXTRA_TOKEN, ASR_KEY)


def tone(seconds: float, hz: float) -> Audio:
    t = np.arange(int(16000 * seconds)) / 16000
    return Audio((0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32), 16000)


class EchoingWorld:
    """A voice system, an ASR and a judge that repeat every credential they were sent."""

    def __call__(self, path: str, body: Any) -> FakeResponse:
        if "/reply" in path:
            if b"q2__" in body:  # an error body echoing the header and the URL, then cut short
                echo = f"bad Authorization: {SYSTEM_HEADER} at {path}; again: "
                return FakeResponse(status=500, raw=(echo.ljust(190, ".") + SYSTEM_HEADER).encode())
            wav = base64.b64encode(audio_to_wav_bytes(tone(0.5, 300))).decode()
            return FakeResponse(
                json_body={
                    "audio": wav,
                    "text": f"you sent {SYSTEM_HEADER} to {path}",
                    # response headers echoed into the reply's details
                    "details": {
                        "headers": {"X-Echo-Authorization": SYSTEM_HEADER},
                        "upstream": f"Bearer {SYSTEM_HEADER}",
                        "url": f"https://user:{URL_TOKEN}@upstream.example/x?token={URL_TOKEN}",
                    },
                }
            )
        if path.endswith("/audio/transcriptions"):
            return FakeResponse(json_body={"text": f"the key is {ASR_KEY} okay"})
        messages = body["messages"]
        token = body.get("metadata", {}).get("session_token", "")
        return chat_text(f"Keys {JUDGE_KEY} and {token} seen in {len(messages)}.\nScore: 7")


@pytest.fixture
def echo_server() -> Any:
    with FakeOpenAIServer(EchoingWorld()) as server:
        yield server


def write_run_config(tmp_path: Path, url: str) -> Path:
    for qid, hz in (("q1", 200), ("q2", 260)):
        write_audio(tone(QUERY_SECONDS, hz), tmp_path / "suite" / f"{qid}.wav")
    suite = {
        "name": "leaky",
        "protocol": "single_turn",
        "queries": [
            {"id": qid, "text": "Say something.", "category": "II", "audio": f"{qid}.wav",
             "checklist": ["Says something"]}
            for qid in ("q1", "q2")
        ],
    }  # fmt: skip
    (tmp_path / "suite" / "suite.yaml").write_text(yaml.safe_dump(suite))
    config = {
        "suite": str(tmp_path / "suite"),
        "systems": [
            {
                "name": "web",
                "type": "http",
                "url": f"{url}/reply?token={URL_TOKEN}",
                "headers_env": {"Authorization": "WEB_HDR"},
            }
        ],
        "judge": {
            "provider": "openai",
            "base_url": url,
            "model": "judge",
            "api_key_env": "JUDGE_CRED",
            "extra_body": {"metadata": {"session_token": EXTRA_TOKEN}},
        },
        "asr": {"provider": "openai", "base_url": url, "api_key_env": "ASR_CRED"},
        "metrics": ["checklist", "wer", "duration"],
        "scoring": {"k": 1},
        "build": {"profiles": 1, "conditions": ["clean"]},
        "concurrency": 1,
        "cache_dir": str(tmp_path / "cache"),
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def leaks(folder: Path, secret: str) -> list[str]:
    """Files under ``folder`` whose bytes contain ``secret`` (binary files included)."""
    needle = secret.encode()
    return [str(p) for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes()]


@pytest.mark.models
def test_planted_keys_never_reach_disk_or_terminal(tmp_path, echo_server, monkeypatch) -> None:
    monkeypatch.setenv("WEB_HDR", SYSTEM_HEADER)
    monkeypatch.setenv("JUDGE_CRED", JUDGE_KEY)
    monkeypatch.setenv("ASR_CRED", ASR_KEY)
    config = write_run_config(tmp_path, echo_server.url)
    out = tmp_path / "out"
    cli = CliRunner()
    outputs = []
    result = cli.invoke(app, ["run", str(config), "--out", str(out)])
    outputs.append(result.output)
    assert "report:" in result.output, result.output
    again = cli.invoke(app, ["run", str(config), "--out", str(out)])  # resume: same config
    outputs.append(again.output)
    assert "differs" not in again.output, again.output

    # A re-score with a judge whose errors echo its key, then a report.
    failing = tmp_path / "judge.yaml"
    failing.write_text(
        yaml.safe_dump(
            {
                "judge": {
                    "provider": "openai",
                    "base_url": echo_server.url + "/broken",
                    "model": "j",
                    "api_key_env": "JUDGE_CRED",
                    "max_retries": 0,
                }
            }
        )
    )
    echo_server.responder = lambda path, body: FakeResponse(
        status=400, json_body={"error": {"message": f"key {JUDGE_KEY} is not allowed here"}}
    )
    result = cli.invoke(
        app, ["score", str(out), "--metrics", "checklist", "--config", str(failing)]
    )
    outputs.append(result.output)
    outputs.append(cli.invoke(app, ["report", str(out)]).output)

    # The servers really were sent every secret, and really echoed them ...
    sent = json.dumps([{"h": r.headers, "p": r.path, "b": r.body if isinstance(r.body, dict)
                        else None} for r in echo_server.requests])  # fmt: skip
    for secret in SECRETS:
        assert secret in sent, secret
    summary = json.loads((out / "report" / "summary.json").read_text())
    units = summary["systems"]["web"]["units"]
    # the system's HTTP 500 is its own failure: scored as one, its message kept in reply.json
    assert (units["done"], units["failed"], units["system_faults"]) == (2, 0, {"exception": 1})
    assert REDACTED in (next(out.glob("items/q1__*/web/0")) / "reply.json").read_text()
    fault = json.loads((next(out.glob("items/q2__*/web/0")) / "reply.json").read_text())
    assert "500" in fault["system_fault"]["message"]
    # ... yet no file of the run, no cache entry and no line printed holds any of them.
    for secret in SECRETS:
        assert leaks(out, secret) == [], secret
        assert leaks(tmp_path / "cache", secret) == [], secret
        assert all(secret not in text for text in outputs), secret
        # a truncated echo leaves no readable part of the key behind either
        assert leaks(out, secret[:12]) == [], secret
    assert list((tmp_path / "cache").rglob("*.json")), "the judge and ASR calls were cached"


def test_friendly_error_messages_are_redacted(tmp_path, monkeypatch) -> None:
    """An error raised before any run starts still does not print a key it contains."""
    monkeypatch.setenv("SOME_CRED", "cred-Zz9Yy8Xx7Ww6Vv5Uu4")
    bad = tmp_path / "cfg.yaml"
    bad.write_text(
        "suite: /nonexistent/cred-Zz9Yy8Xx7Ww6Vv5Uu4/suite\n"
        "systems: [{name: s, type: http, url: 'http://127.0.0.1:9', headers_env: {A: SOME_CRED}}]\n"
    )
    result = CliRunner().invoke(app, ["run", str(bad), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "cred-Zz9Yy8Xx7Ww6Vv5Uu4" not in result.output
    assert REDACTED in result.output
