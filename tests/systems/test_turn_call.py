"""The call adapter: a turn-based system (here ``http``, served on 127.0.0.1) holds a live call;
its faults are the system's failures."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse
from tests.simulation.helpers import scenario, write_suite
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.cli.main import app
from voxeval.config import SystemSpec
from voxeval.protocols.live_call import build_agent
from voxeval.simulation.callers.scripted_caller import ScriptedCaller
from voxeval.simulation.engine import run_call
from voxeval.systems import TurnSystemCall

_TEXT_FIELD = re.compile(rb'name="text"\r\n(?:Content-Type: [^\r]*\r\n)?\r\n(.*?)\r\n--', re.S)
_HISTORY_FIELD = re.compile(
    rb'name="history"\r\n(?:Content-Type: [^\r]*\r\n)?\r\n(.*?)\r\n--', re.S
)


def _field(pattern: re.Pattern[bytes], body: bytes) -> str:
    found = pattern.search(body)
    assert found is not None, body[:400]
    return found.group(1).decode("utf-8")


def test_an_http_system_holds_a_text_mode_call_through_the_adapter(tmp_path: Path) -> None:
    answers = iter(f"Answer number {n}." for n in range(1, 100))

    def responder(path: str, body: Any) -> FakeResponse:
        return FakeResponse(json_body={"text": next(answers)})

    suite = load_scenario_suite(write_suite(tmp_path / "suite", [scenario("book-1")]))
    scene = suite.scenarios[0]
    with FakeOpenAIServer(responder) as server:
        spec = SystemSpec(name="web", type="http", url=server.url + "/reply")
        agent = build_agent(spec, None)
        assert isinstance(agent, TurnSystemCall)
        result = run_call(
            scene,
            ScriptedCaller(behaviour_kind="none"),  # no drawn pauses: each turn is one request
            agent,
            ToolRuntime(scene, suite.tools),
            mode="text",
            seed=0,
        )
        bodies = [r.body for r in server.requests]
    assert result.system_fault is None
    said = [s.intended_text for s in result.timeline.speech("assistant")]
    heard = [s.intended_text for s in result.timeline.speech("user")]
    assert len(bodies) >= 2
    assert said == [f"Answer number {n}." for n in range(1, len(bodies) + 1)]
    assert result.timeline.tools == []  # a turn system gets no tools
    # Each request carries the caller's turn as text and the call's history before it.
    for n, body in enumerate(bodies):
        assert isinstance(body, bytes)
        assert _field(_TEXT_FIELD, body) == heard[n]
        history = json.loads(_field(_HISTORY_FIELD, body))
        assert [t["role"] for t in history] == ["user", "assistant"] * n
        assert [t["text"] for t in history if t["role"] == "assistant"] == said[:n]


def test_a_crashing_http_system_in_a_call_is_scored_as_a_system_failure(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", [scenario("book-1"), scenario("book-2")])
    with FakeOpenAIServer(lambda path, body: FakeResponse(status=500)) as server:
        config = {
            "suite": str(suite),
            "systems": [
                {"name": "web", "type": "http", "url": server.url + "/reply", "max_retries": 0}
            ],
            "seed": 1,
            "simulation": {"caller": "scripted", "mode": "text"},
        }
        path = tmp_path / "live.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        out = tmp_path / "run"
        result = CliRunner().invoke(app, ["run", str(path), "--out", str(out)])
        requests = len(server.requests)
    assert result.exit_code == 1, result.output  # 2 system-fault units, --max-failures 0
    assert requests == 2  # one turn per call, no retries
    summary = json.loads((out / "report" / "summary.json").read_text())
    entry = summary["systems"]["web"]
    assert entry["units"]["system_faults"] == {"exception": 2}
    assert entry["task_completion"]["mean"] == 0.0 and entry["task_completion"]["n"] == 2
    for sid in ("book-1", "book-2"):
        call = json.loads((out / "items" / sid / "web" / "0" / "call.json").read_text())
        assert call["end_reason"] == "agent_error"
        assert call["system_fault"]["cause"] == "exception"
        assert "system 'web'" in call["system_fault"]["message"]
        scores = json.loads((out / "items" / sid / "web" / "0" / "scores.json").read_text())
        assert scores["task_completion"]["value"] == 0.0
