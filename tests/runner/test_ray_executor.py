"""``voxeval run --executor ray`` on a local 2-CPU Ray cluster: the same scores as the local
executor with the same seed, no finished unit lost when workers are killed mid-unit, and a
clear message when Ray is missing.

The cluster is started once for the module; every service is a loopback server of this
process (the workers reach it on 127.0.0.1)."""

from __future__ import annotations

import base64
import json
import re
import sqlite3
import struct
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from tests.protocols.test_live_call import write_config as write_live_call_config
from voxeval.audio import Audio, audio_to_wav_bytes, write_audio
from voxeval.cli.main import app
from voxeval.runner.ray_limits import NAMESPACE

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


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[FakeOpenAIServer, World]]:
    responder = World()
    with FakeOpenAIServer(responder) as server:
        yield server, responder


@pytest.fixture(scope="module")
def local_run(world, tmp_path_factory) -> Path:
    """The local executor's run of the single-turn suite: what every Ray run must equal."""
    server, responder = world
    tmp = tmp_path_factory.mktemp("local")
    started = time.perf_counter()
    result = run_cli(single_turn_config(tmp, server.url), tmp / "run")
    assert result.exit_code == 0, result.output
    print(f"local run of {N_QUERIES} single-turn units: {time.perf_counter() - started:.1f} s")
    responder.replies.clear()
    return tmp / "run"


@pytest.fixture
def fresh_world(world) -> Iterator[tuple[FakeOpenAIServer, World]]:
    """The module's world with its counters cleared and no kill hook (also after the test)."""
    world[1].replies.clear()
    world[1].on_reply = None
    yield world
    world[1].on_reply = None


def single_turn_config(tmp_path: Path, url: str, cache: str = "cache", **overrides: Any) -> Path:
    suite_dir = tmp_path / "suite"
    queries = []
    for i in range(N_QUERIES):
        write_audio(tone(1.0, 150 + 20 * i), suite_dir / f"q{i}.wav")
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


@pytest.mark.slow  # worker start-up (imports, models) on a 2-CPU cluster
def test_single_turn_run_on_ray_equals_the_local_run(
    ray_cluster, world, local_run, tmp_path
) -> None:
    server, _ = world
    started = time.perf_counter()
    config = single_turn_config(tmp_path, server.url)
    remote = run_cli(config, tmp_path / "ray", "--executor", "ray")
    assert remote.exit_code == 0, remote.output
    print(f"ray run of {N_QUERIES} single-turn units: {time.perf_counter() - started:.1f} s")
    assert "ray: " in remote.output and "workers" in remote.output
    assert_same_results(local_run, tmp_path / "ray")
    summary = json.loads((tmp_path / "ray" / "report" / "summary.json").read_text())
    overall = summary["systems"]["live"]["overall"]
    assert overall["assertions"]["mean"] == 1.0 and overall["wer"]["mean"] == 0.0
    assert overall["duration"]["n"] == N_QUERIES
    # Usage and identities reached the index and run.yaml through the driver.
    usage = [index_rows(d, "SELECT provider, SUM(calls), SUM(requests) FROM usage GROUP BY 1")
             for d in (local_run, tmp_path / "ray")]  # fmt: skip
    assert usage[0] == usage[1] and usage[0]
    assert index_rows(tmp_path / "ray", "SELECT DISTINCT status, attempts FROM units") == [
        ("done", 1)
    ]
    models = yaml.safe_load((tmp_path / "ray" / "run.yaml").read_text())["models"]
    assert "system" in models and "mos" in models


@pytest.mark.slow  # worker start-up (imports, models) on a 2-CPU cluster
def test_live_call_run_on_ray_equals_the_local_run(ray_cluster, tmp_path) -> None:
    config = write_live_call_config(tmp_path)
    local = run_cli(config, tmp_path / "local")
    assert local.exit_code == 0, local.output
    remote = run_cli(config, tmp_path / "ray", "--executor", "ray")
    assert remote.exit_code == 0, remote.output
    assert_same_results(tmp_path / "local", tmp_path / "ray")
    assert len(list((tmp_path / "ray").rglob("call.json"))) == 16
    for events in (tmp_path / "ray").rglob("events.jsonl"):  # the recordings are identical too
        twin = tmp_path / "local" / events.relative_to(tmp_path / "ray")
        assert events.read_bytes() == twin.read_bytes(), events


def kill_workers_at(ray: Any, world: World, out: Path, nth: int) -> dict[str, Any]:
    """On the ``nth`` system request, kill every worker of the run (mid-unit: the request is
    answered only after the kill) and note the units the index had finished by then."""
    seen: dict[str, Any] = {}

    def on_reply(query: int, count: int) -> None:
        if count != nth:
            return
        run_id = yaml.safe_load((out / "run.yaml").read_text())["run_id"]
        names = [
            entry["name"]
            for entry in ray.util.list_named_actors(all_namespaces=True)
            if entry["name"].startswith(f"{run_id}/worker/")
        ]
        for name in names:
            ray.kill(ray.get_actor(name, namespace=NAMESPACE), no_restart=False)
        seen["killed"] = len(names)
        seen["done"] = {row[0] for row in index_rows(out, "SELECT unit_key FROM units "
                                                     "WHERE status = 'done'")}  # fmt: skip
        time.sleep(1.5)  # the worker is dead before it could read this answer

    world.on_reply = on_reply
    return seen


@pytest.mark.slow  # worker start-up (imports, models) on a 2-CPU cluster
def test_killed_workers_lose_no_finished_unit(ray_cluster, local_run, fresh_world, tmp_path):
    server, responder = fresh_world
    config = single_turn_config(tmp_path, server.url)
    seen = kill_workers_at(ray_cluster, responder, tmp_path / "ray", nth=3)
    result = run_cli(config, tmp_path / "ray", "--executor", "ray")
    assert result.exit_code == 0, result.output
    assert seen["killed"] == 2 and len(seen["done"]) >= 1
    assert_same_results(local_run, tmp_path / "ray", usage=False)
    # Units finished before the kill were never sent again; the killed ones ran twice.
    done_queries = {int(re.match(r"q(\d+)__", key).group(1)) for key in seen["done"]}
    assert all(responder.replies[q] == 1 for q in done_queries)
    rerun = sum(n - 1 for n in responder.replies.values())
    assert 1 <= rerun <= 2  # the units in flight on the two killed workers
    assert not list((tmp_path / "ray").rglob("error.txt"))


@pytest.mark.slow  # worker start-up (imports, models) on a 2-CPU cluster
def test_a_unit_whose_worker_died_is_failed_then_resumed(
    ray_cluster, local_run, fresh_world, tmp_path
) -> None:
    server, responder = fresh_world
    config = single_turn_config(tmp_path, server.url, ray={"max_retries": 0})
    seen = kill_workers_at(ray_cluster, responder, tmp_path / "ray", nth=2)
    first = run_cli(config, tmp_path / "ray", "--executor", "ray")
    assert first.exit_code == 1, first.output  # units failed on our side
    failed = index_rows(tmp_path / "ray", "SELECT unit_key, cause FROM units "
                        "WHERE status = 'failed'")  # fmt: skip
    assert failed and {cause for _, cause in failed} == {"worker"}
    assert seen["done"] <= {
        key for (key,) in index_rows(tmp_path / "ray", "SELECT unit_key FROM units "
                                     "WHERE status = 'done'")
    }  # fmt: skip
    responder.on_reply = None
    before = sum(responder.replies.values())
    again = run_cli(config, tmp_path / "ray", "--executor", "ray")
    assert again.exit_code == 0, again.output
    assert sum(responder.replies.values()) - before == len(failed)  # only those run again
    assert_same_results(local_run, tmp_path / "ray", usage=False)


def test_ray_executor_without_ray_names_the_extra(tmp_path, monkeypatch) -> None:
    config = write_live_call_config(tmp_path)
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as if not installed
    result = run_cli(config, tmp_path / "run", "--executor", "ray")
    assert result.exit_code == 2, result.output
    assert "voxeval[scale]" in result.output and "executor" in result.output
    assert not (tmp_path / "run").exists()  # refused before anything was written


def test_address_needs_the_ray_executor(tmp_path) -> None:
    result = run_cli(write_live_call_config(tmp_path), tmp_path / "run", "--address", "auto")
    assert result.exit_code == 2 and "--executor ray" in result.output


@pytest.mark.slow  # a PostgreSQL cluster and Ray workers
def test_ray_run_with_a_postgresql_index(ray_cluster, postgres_url, tmp_path) -> None:
    """Workers never open the index, so a PostgreSQL index by URL works as SQLite does."""
    from voxeval.config import load_run_config
    from voxeval.runner import run_evaluation
    from voxeval.store import RunStore

    config = write_live_call_config(tmp_path)
    assert run_cli(config, tmp_path / "local").exit_code == 0
    remote = load_run_config(config).model_copy(update={"executor": "ray"})
    run_dir = run_evaluation(remote, tmp_path / "ray", index_url=postgres_url)
    assert not (run_dir / "index.sqlite").exists()
    store = RunStore(run_dir, index_url=postgres_url)
    try:
        assert len(store.finished_keys()) == 16
    finally:
        store.close()
    assert (tmp_path / "local" / "report" / "scores.csv").read_text() == (
        run_dir / "report" / "scores.csv"
    ).read_text()
