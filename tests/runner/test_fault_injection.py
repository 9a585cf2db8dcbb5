"""A run against loopback endpoints that fail 20% of requests with every kind of fault (429
with Retry-After, 500, a hang past the timeout, malformed JSON, empty choices) — the systems
under test, the judge, the scoring ASR and a cascade's TTS — ends honestly: every unit is
scored or listed as failed/pending with its cause, the exit code says whether anything is
missing, a second run completes the pending work without calling the systems, and the usage
in the index counts exactly the requests, retries and timeouts the servers saw."""

from __future__ import annotations

import base64
import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import (
    FAULT_KINDS,
    FakeOpenAIServer,
    FakeResponse,
    FaultSchedule,
    chat_text,
)
from tests.simulation.helpers import scenario, write_suite
from tests.simulation.test_live_calls_models import responder as clinic_calls
from tests.support.query_clips import QUERY_SECONDS
from voxeval.audio import Audio, audio_to_wav_bytes, write_audio
from voxeval.cli.main import app
from voxeval.store import RunStore

ITEMS = 8
TRIALS = 3
HANG_S = 2.5  # a fault's reply held this long; every client gives up after TIMEOUT_S
TIMEOUT_S = 1.0  # generous: a loaded machine must not turn a slow answer into a timeout
# Retries per server: the scoring side gets 2 attempts, so some calls fail after both.
RETRIES = {"system": 2, "cascade": 2, "judge": 1, "asr": 1}
FAST = {"timeout_s": TIMEOUT_S, "backoff_base_s": 0.001, "backoff_max_s": 0.004}
SOURCE_RETRYABLE = frozenset(FAULT_KINDS)  # providers retry every kind of fault
TRANSPORT = frozenset({"rate_limit", "server_error", "hang"})  # what an http system retries


def tone(seconds: float, hz: float) -> Audio:
    t = np.arange(int(16000 * seconds)) / 16000
    return Audio((0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32), 16000)


REPLY_WAV = audio_to_wav_bytes(tone(0.4, 330))


def healthy(path: str, body: Any) -> FakeResponse:
    """Every endpoint's good answer."""
    if path.endswith("/audio/transcriptions"):
        return FakeResponse(json_body={"text": "It opens at nine."})
    if path.endswith("/audio/speech"):
        return FakeResponse(raw=REPLY_WAV, content_type="audio/wav")
    if path.endswith("/chat/completions"):
        return chat_text("Fine answer.\nScore: 7")
    audio = base64.b64encode(REPLY_WAV).decode()  # the http system
    return FakeResponse(json_body={"audio": audio, "text": "It opens at nine."})


class RecordingServer(FakeOpenAIServer):
    """Remembers, in arrival order, each POST's path and the fault it got (None: answered)."""

    def __init__(self, faults: FaultSchedule) -> None:
        super().__init__(healthy, faults=faults)
        self.outcomes: list[tuple[str, str | None]] = []
        self._order = threading.Lock()

    def _fault(self, path: str) -> FakeResponse | None:
        with self._order:
            served = len(self.faults)
            response = super()._fault(path)
            kind = self.faults[-1].kind if len(self.faults) > served else None
            self.outcomes.append((path, kind))
            return response

    def heal(self) -> None:
        self.fault_schedule = None


def server_view(server: RecordingServer, retryable: frozenset[str], retries: int) -> dict[str, int]:
    """Requests, retries and timeouts as seen from the server, for one sequential client per
    path that makes ``retries + 1`` attempts: a fault is retried unless it ended its call's
    last attempt or is an answer the client does not retry (a system's bad body)."""
    seen = {"requests": 0, "retries": 0, "timeouts": 0}
    by_path: dict[str, list[str | None]] = {}
    for path, kind in server.outcomes:
        by_path.setdefault(path, []).append(kind)
    for kinds in by_path.values():
        failed_attempts = 0
        for kind in kinds:
            seen["requests"] += 1
            seen["timeouts"] += kind == "hang"
            if kind is None or kind not in retryable:
                failed_attempts = 0
                continue
            failed_attempts += 1
            if failed_attempts == retries + 1:
                failed_attempts = 0  # the call gave up: nothing was sent again
            else:
                seen["retries"] += 1
    return seen


def seeded(seed: int) -> FaultSchedule:
    return FaultSchedule.seeded(0.2, seed=seed, hang_s=HANG_S, retry_after="0.01")


@pytest.fixture
def servers() -> Any:
    # Seeds picked so that each server serves every kind of fault in the first run.
    made = {
        name: RecordingServer(seeded(seed)).start()
        for name, seed in (("system", 26), ("cascade", 2), ("judge", 1), ("asr", 63))
    }
    yield made
    for server in made.values():
        server.stop()


def write_config(tmp_path: Path, servers: dict[str, RecordingServer]) -> Path:
    queries = []
    for n in range(ITEMS):
        qid = f"q{n}"
        write_audio(tone(QUERY_SECONDS, 200 + 30 * n), tmp_path / "suite" / f"{qid}.wav")
        queries.append(
            {"id": qid, "text": "When does the shop open?", "category": "II",
             "audio": f"{qid}.wav", "checklist": ["Gives the opening time"],
             "assertions": [{"kind": "require_any", "values": ["nine"]}]}
        )  # fmt: skip
    suite = {"name": "faulty", "protocol": "single_turn", "queries": queries}
    (tmp_path / "suite" / "suite.yaml").write_text(yaml.safe_dump(suite))

    def provider(name: str, **extra: Any) -> dict[str, Any]:
        url, retries = servers[name].url, RETRIES[name]
        return {"provider": "openai", "base_url": url, **FAST, "max_retries": retries, **extra}

    web = {"url": f"{servers['system'].url}/reply", **FAST, "max_retries": RETRIES["system"]}

    cascade = {"asr": provider("cascade"), "llm": provider("cascade", model="m")}
    cascade["tts"] = provider("cascade")
    config = {
        "suite": str(tmp_path / "suite"),
        "systems": [
            {"name": "web", "type": "http", **web},
            {"name": "casc", "type": "cascade", **cascade},
        ],
        "judge": provider("judge", model="judge"),
        "asr": provider("asr"),
        "metrics": ["checklist", "assertions", "wer", "duration"],
        "scoring": {"k": 2, "max_decodes": 4},
        "build": {"profiles": 1, "conditions": ["clean"]},
        "trials": TRIALS,
        "concurrency": 1,  # one client at a time: the servers' fault sequences are fixed
        "cache_dir": str(tmp_path / "cache"),
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def run(config: Path, out: Path) -> Any:
    args = ["run", str(config), "--out", str(out), "--max-failures", "1000"]
    return CliRunner().invoke(app, [*args, "--retries", "2", "--retry-backoff", "0"])


def check_usage_equals_server_view(out: Path, servers: dict[str, RecordingServer]) -> None:
    usage = RunStore(out).usage.summary()
    by_provider = usage["by_provider"]
    expected = {
        "system:web": server_view(servers["system"], TRANSPORT, RETRIES["system"]),
        "system:casc": server_view(servers["cascade"], SOURCE_RETRYABLE, RETRIES["cascade"]),
        "judge": server_view(servers["judge"], SOURCE_RETRYABLE, RETRIES["judge"]),
        "scoring_asr": server_view(servers["asr"], SOURCE_RETRYABLE, RETRIES["asr"]),
    }
    for label, seen in expected.items():
        counted = {k: by_provider[label][k] for k in ("requests", "retries", "timeouts")}
        assert counted == seen, label
        assert counted["requests"] == len(servers_of(label, servers).posts())
    total = usage["total"]
    assert total["requests"] == sum(len(s.posts()) for s in servers.values())
    summary = json.loads((out / "report" / "summary.json").read_text())
    assert summary["usage"]["total"]["requests"] == total["requests"]
    assert summary["usage"]["total"]["timeouts"] == total["timeouts"]


def servers_of(label: str, servers: dict[str, RecordingServer]) -> RecordingServer:
    name = {"system:web": "system", "system:casc": "cascade"}.get(label, label)
    return servers["asr" if name == "scoring_asr" else name]


@pytest.mark.models
def test_a_run_with_20_percent_faults_everywhere_ends_honestly(
    tmp_path: Path, servers: dict[str, RecordingServer]
) -> None:
    config, out = write_config(tmp_path, servers), tmp_path / "out"
    first = run(config, out)
    assert first.exit_code in (0, 1), first.output

    for name, server in servers.items():  # 20% faults of every kind on each endpoint
        kinds = Counter(kind for _, kind in server.outcomes if kind is not None)
        assert set(kinds) == set(FAULT_KINDS), (name, kinds)
        rate = sum(kinds.values()) / len(server.outcomes)
        assert 0.1 <= rate <= 0.35, (name, rate)

    store = RunStore(out)
    units = store.units.records()
    assert len(units) == 2 * ITEMS * TRIALS
    for unit in units:  # scored, or failed with its cause: nothing vanished
        assert unit.status in ("done", "failed"), unit
        if unit.status == "failed":
            assert unit.cause and unit.error, unit
    pending = store.scores.pending_metrics()
    for rows in store.scores.load():
        if rows.pending:
            assert rows.error and ("EndpointError" in rows.error or "Fault" in rows.error)
    faults = Counter(u.system_fault for u in units if u.system_fault)
    failed = [u for u in units if u.status == "failed"]
    assert pending or failed, "the first run should leave work for the second"
    assert first.exit_code == 1  # something failed or is pending
    for unit in units:  # a system fault is the system's result, stored with its cause
        reply = json.loads((store.folder.unit_dir(unit) / "reply.json").read_text())
        fault = reply.get("system_fault")
        assert (fault or {}).get("cause") == unit.system_fault
    assert set(faults) <= {"malformed_output", "no_audio", "timeout", "exception"}
    check_usage_equals_server_view(out, servers)

    # Second run, every endpoint healthy: only the pending work is done, systems untouched.
    system_posts = {n: len(servers[n].posts()) for n in ("system", "cascade")}
    newly_run = {u.key for u in failed}
    for server in servers.values():
        server.heal()
    second = run(config, out)
    assert second.exit_code == 0, second.output
    store = RunStore(out)
    assert store.scores.pending_metrics() == {}
    assert all(u.status == "done" for u in store.units.records())
    if not newly_run:  # failed units are re-run; otherwise no system was called again
        assert {n: len(servers[n].posts()) for n in system_posts} == system_posts
    summary = json.loads((out / "report" / "summary.json").read_text())
    for name in ("web", "casc"):
        entry = summary["systems"][name]
        assert entry["units"]["pending_metrics"] == 0 and entry["units"]["failed"] == 0
        assert entry["overall"]["checklist"]["n"] == ITEMS * TRIALS  # system faults included
    check_usage_equals_server_view(out, servers)


# -- live calls -----------------------------------------------------------------------------

SCENARIOS = 6
CALL_TRIALS = 2
LIVE_RETRIES = {"agent": 1, "caller": 0}  # every caller fault breaks the attempt


class LiveServer(RecordingServer):
    """A loopback LLM that plays both the clinic agent and the caller (by their prompts)."""

    def __init__(self, faults: FaultSchedule) -> None:
        super().__init__(faults)
        self.responder = clinic_calls


def write_live_config(tmp_path: Path, agent: LiveServer, caller: LiveServer) -> Path:
    suite = write_suite(tmp_path / "suite", [scenario(f"book-{n}") for n in range(SCENARIOS)])

    def llm(server: LiveServer, retries: int) -> dict[str, Any]:
        return {"provider": "openai", "base_url": server.url, "model": "m", **FAST,
                "max_retries": retries}  # fmt: skip

    config = {
        "suite": str(suite),
        "systems": [{"name": "clinic", "type": "cascade",
                     "llm": llm(agent, LIVE_RETRIES["agent"]), "asr": None, "voice": None}],
        "trials": CALL_TRIALS,
        "seed": 1,
        "concurrency": 1,
        "simulation": {"caller": "llm", "caller_llm": llm(caller, LIVE_RETRIES["caller"]),
                       "mode": "text", "latency_model": {"agent": {"kind": "fixed", "ms": 700}}},
    }  # fmt: skip
    path = tmp_path / "live.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.models
def test_live_calls_with_faulty_agent_and_caller_endpoints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VOXEVAL_NO_CACHE", "1")  # every attempt of the caller really calls
    agent, caller = LiveServer(seeded(4)).start(), LiveServer(seeded(5)).start()
    try:
        config, out = write_live_config(tmp_path, agent, caller), tmp_path / "out"
        first = run(config, out)
        for name, server in (("agent", agent), ("caller", caller)):
            kinds = Counter(kind for _, kind in server.outcomes if kind is not None)
            assert set(kinds) == set(FAULT_KINDS), (name, kinds)

        store = RunStore(out)
        units = store.units.records()
        assert len(units) == SCENARIOS * CALL_TRIALS
        failed = [u for u in units if u.status == "failed"]
        faulted = [u for u in units if u.status == "done" and u.system_fault]
        # The caller (our side) kept failing: retried, then failed with its cause.
        assert failed and all(u.cause == "simulator" and u.attempts == 3 for u in failed)
        assert all("EndpointError" in (u.error or "") for u in failed)
        # The agent (the system under test) failed: a result, scored as a failure.
        assert faulted
        for unit in faulted:
            scores = json.loads((store.folder.unit_dir(unit) / "scores.json").read_text())
            assert scores["task_completion"]["value"] == 0.0
            assert scores["task_completion"]["details"]["system_fault"] == unit.system_fault
        assert first.exit_code == 1, first.output
        assert f"failed (simulator): {len(failed)} unit" in first.output

        def check_counts() -> None:
            by_provider = RunStore(out).usage.summary()["by_provider"]
            for label, server, retries in (
                ("system:clinic", agent, LIVE_RETRIES["agent"]),
                ("simulator", caller, LIVE_RETRIES["caller"]),
            ):
                counted = {k: by_provider[label][k] for k in ("requests", "retries", "timeouts")}
                assert counted == server_view(server, SOURCE_RETRYABLE, retries), label
                assert counted["requests"] == len(server.posts())

        check_counts()
        agent.heal()
        caller.heal()
        second = run(config, out)
        assert second.exit_code == 0, second.output
        assert all(u.status == "done" for u in RunStore(out).units.records())
        check_counts()
    finally:
        agent.stop()
        caller.stop()
