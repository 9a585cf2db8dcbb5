"""A scripted world for executor tests (local, processes, Ray): an HTTP voice system, a
transcription endpoint and a judge on one loopback server, a six-query single-turn suite, and
comparisons of two run folders' results."""

from __future__ import annotations

import base64
import json
import re
import sqlite3
import struct
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeResponse, chat_text
from tests.support.query_clips import QUERY_SECONDS
from voxeval.audio import Audio, audio_to_wav_bytes, write_audio
from voxeval.cli.main import app

N_QUERIES = 6


def tone(seconds: float, hz: float) -> Audio:
    t = np.arange(int(16000 * seconds)) / 16000
    return Audio((0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32), 16000)


def reply_seconds(i: int) -> float:
    return 0.6 + 0.25 * i  # distinct lengths: the fake ASR recognises a reply by its length


def reply_text(i: int) -> str:
    return f"For question {i} the answer is {i + 3} minutes."


class World:
    """An HTTP voice system, a transcription endpoint and a judge, all scripted."""

    def __init__(self) -> None:
        self.replies: Counter[int] = Counter()
        self.lock = threading.Lock()
        self.on_reply: Callable[[int, int], None] | None = None  # (query, nth reply overall)

    def __call__(self, path: str, body: Any) -> FakeResponse:
        if path.endswith("/reply"):
            found = re.search(rb"q(\d+)__", body if isinstance(body, bytes) else b"")
            if found is None:
                found = re.search(r"q(\d+)__", json.dumps(body))
            assert found is not None, "the system request names its item"
            i = int(found.group(1))
            with self.lock:
                self.replies[i] += 1
                nth = sum(self.replies.values())
            if self.on_reply is not None:
                self.on_reply(i, nth)
            audio = tone(reply_seconds(i), 200 + 30 * i)
            wav = base64.b64encode(audio_to_wav_bytes(audio)).decode()
            return FakeResponse(json_body={"audio": wav, "text": reply_text(i)})
        if path.endswith("/audio/transcriptions"):
            seconds = wav_seconds(body)
            i = min(range(N_QUERIES), key=lambda q: abs(reply_seconds(q) - seconds))
            return FakeResponse(json_body={"text": reply_text(i)})
        prompt = json.dumps(body["messages"])
        found = re.search(r"question (\d+)", prompt)
        score = 4 + int(found.group(1)) % 5 if found else 1
        return chat_text(f"Strengths: direct.\nWeaknesses: none.\nScore: {score}")


def wav_seconds(body: bytes) -> float:
    """The duration of the 16-bit WAV inside a multipart upload."""
    start = body.index(b"RIFF")
    rate = struct.unpack_from("<I", body, start + 24)[0]
    data = body.index(b"data", start)
    size = struct.unpack_from("<I", body, data + 4)[0]
    return float(size / (2 * rate))


def single_turn_config(tmp_path: Path, url: str, cache: str = "cache", **overrides: Any) -> Path:
    suite_dir = tmp_path / "suite"
    queries = []
    for i in range(N_QUERIES):
        write_audio(tone(QUERY_SECONDS, 150 + 20 * i), suite_dir / f"q{i}.wav")
        queries.append(
            {"id": f"q{i}", "text": f"Question {i}?", "category": "SR" if i % 2 else "TC",
             "audio": f"q{i}.wav", "checklist": ["Gives the number of minutes"],
             "assertions": [{"kind": "number", "values": [str(i + 3)], "tolerance": 0}]}
        )  # fmt: skip
    (suite_dir / "suite.yaml").write_text(
        yaml.safe_dump({"name": "six", "protocol": "single_turn", "queries": queries})
    )
    config = {
        "suite": str(suite_dir),
        "systems": [{"name": "live", "type": "http", "url": url + "/reply"}],
        "judge": {"provider": "openai", "base_url": url, "model": "judge"},
        "asr": {"provider": "openai", "base_url": url},
        "mos": {"provider": "dnsmos"},  # an embedded model: loaded once per worker
        "metrics": ["assertions", "wer", "duration", "speaking_rate", "mos"],
        "build": {"profiles": 1, "conditions": ["clean"]},
        "scoring": {"k": 1},
        "seed": 5,
        "concurrency": 2,
        "cache_dir": str(tmp_path / cache),  # each run its own: judged and transcribed anew
        **overrides,
    }
    path = tmp_path / f"{cache}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def run_cli(config: Path, out: Path, *extra: str) -> Any:
    return CliRunner().invoke(app, ["run", str(config), "--out", str(out), *extra])


def stable_summary(run_dir: Path) -> Any:
    """summary.json without the run's identity and measured wall-clock latencies."""

    def drop(data: Any) -> Any:
        if isinstance(data, dict):
            return {k: drop(v) for k, v in data.items() if k not in ("latency", "run_id")}
        if isinstance(data, list):
            return [drop(v) for v in data]
        return data

    summary = json.loads((run_dir / "report" / "summary.json").read_text())
    summary.pop("generated_at")
    return drop(summary)


def unit_scores(run_dir: Path) -> dict[str, Any]:
    return {
        str(p.parent.relative_to(run_dir)): json.loads(p.read_text())
        for p in sorted(run_dir.rglob("scores.json"))
    }


def index_rows(run_dir: Path, query: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(f"file:{run_dir / 'index.sqlite'}?mode=ro", uri=True) as conn:
        return list(conn.execute(query))


def differences(a: Any, b: Any, path: str = "") -> Iterator[str]:
    """``path: a != b`` for every leaf where two JSON documents differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            yield from differences(a.get(key), b.get(key), f"{path}.{key}")
    elif a != b:
        yield f"{path}: {a!r} != {b!r}"


def _measured_usage(path: str) -> bool:
    """Usage, and the costs priced from it, count the requests really sent."""
    return ".usage." in path or path.startswith(".costs.")


def assert_same_results(local: Path, remote: Path, *, usage: bool = True) -> None:
    """Same scores, summary and per-unit scores. ``usage=False``: request counts (and the
    costs priced from them) may differ
    (an attempt cut short by a dead worker never reported its requests, and its retry may
    find the scoring ASR's answer in the cache)."""
    assert (local / "report" / "scores.csv").read_text() == (
        remote / "report" / "scores.csv"
    ).read_text()
    differing = [
        line
        for line in differences(stable_summary(local), stable_summary(remote))
        if usage or not _measured_usage(line.split(":")[0] + ".")
    ]
    assert not differing, differing[:10]
    assert unit_scores(local) == unit_scores(remote)


def assert_resume_runs_only_the_failed(
    responder: World, config: Path, out: Path, executor: str, failed: int, local_run: Path
) -> None:
    """``voxeval run`` again on ``out``: only the ``failed`` units call their system again,
    and the results then equal the local run's."""
    responder.on_reply = None
    before = sum(responder.replies.values())
    again = run_cli(config, out, "--executor", executor)
    assert again.exit_code == 0, again.output
    assert sum(responder.replies.values()) - before == failed
    assert_same_results(local_run, out, usage=False)
