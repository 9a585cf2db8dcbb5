"""Live calls that fail: an agent that crashes or goes silent on a fixed third of the
scenarios scores exactly like an agent that completes those calls with a wrong database;
a caller (our side) that breaks — the LLM caller whose loopback model answers nothing on those
scenarios — is retried, then the unit is failed with its cause, excluded and warned about."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from tests.simulation.helpers import scenario, write_suite
from voxeval.cli.main import app
from voxeval.registry import register
from voxeval.simulation.parties import AgentTurn
from voxeval.store import RunStore
from voxeval.systems.scripted import ScriptedAgent, ScriptedSystem

SCENARIOS = ("book-1", "book-2", "book-3")
FAILING = "book-3"  # the fixed third of the suite where the systems fail
# The failing scenario's caller persona: how the loopback caller model recognises it.
FAILING_PERSONA = "A parent phoning from a tunnel."


class CrashingAgent(ScriptedAgent):
    """The scripted agent, except that on the failing scenario it raises at its 2nd turn."""

    def start(self, scenario: Any, tools: Any) -> AgentTurn | None:
        self.scenario_id, self.turns = scenario.id, 0
        return super().start(scenario, tools)

    def respond(self, user_audio: Any, user_text: str | None) -> AgentTurn:
        self.turns += 1
        if self.scenario_id == FAILING and self.turns == 2:
            raise RuntimeError("agent backend crashed")
        return super().respond(user_audio, user_text)


class SilentAgent(CrashingAgent):
    """Says nothing at its 2nd turn of the failing scenario (a timeout of the agent)."""

    def respond(self, user_audio: Any, user_text: str | None) -> AgentTurn:
        if self.scenario_id == FAILING and self.turns == 1:
            self.turns += 1
            return AgentTurn(text=None)
        return super().respond(user_audio, user_text)


class WrongThereAgent(ScriptedAgent):
    """Completes every call; on the failing scenario it books the wrong day."""

    def start(self, scenario: Any, tools: Any) -> AgentTurn | None:
        self.script = "wrong" if scenario.id == FAILING else "expected"
        return super().start(scenario, tools)


def _system(name: str, agent: type[ScriptedAgent]) -> None:
    """Register a scripted system whose calls are played by ``agent``."""
    register("system", name)(
        type(f"{agent.__name__}System", (ScriptedSystem,), {"agent_class": agent})
    )


_system("test-crashing", CrashingAgent)
_system("test-silent", SilentAgent)
_system("test-wrong-there", WrongThereAgent)


def caller_model(path: str, body: dict[str, Any]) -> FakeResponse:
    """The LLM caller's model: agrees with whatever the agent says, and answers nothing at all
    in the failing scenario (the scripted agent ends each call when its script is done)."""
    if FAILING_PERSONA in body["messages"][0]["content"]:
        return chat_text("")
    return chat_text("Yes, please.")


def write_config(
    tmp_path: Path, systems: list[str], caller_llm: dict[str, Any] | None = None
) -> Path:
    scenarios = [scenario(sid) for sid in SCENARIOS]
    scenarios[SCENARIOS.index(FAILING)]["user_persona"] = FAILING_PERSONA
    suite = write_suite(tmp_path / "suite", scenarios)
    simulation: dict[str, Any] = {
        "caller": "scripted",
        "mode": "text",
        "latency_model": {"agent": {"kind": "fixed", "ms": 700}},
    }
    if caller_llm is not None:
        simulation.update(caller="llm", caller_llm=caller_llm, behaviour="none")
    config = {
        "suite": str(suite),
        # fixed tool arguments: the fake LLM caller says only "Yes, please."
        "systems": [{"name": name, "type": f"test-{name}", "listen": False} for name in systems],
        "trials": 2,
        "seed": 1,
        "simulation": simulation,
    }
    path = tmp_path / "live.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def summary(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "report" / "summary.json").read_text())
    return data


def test_a_failing_agent_scores_like_one_that_fails_those_scenarios(tmp_path: Path) -> None:
    out = tmp_path / "run"
    config = write_config(tmp_path, ["crashing", "silent", "wrong-there"])
    result = CliRunner().invoke(app, ["run", str(config), "--out", str(out)])
    assert result.exit_code == 1, result.output  # 4 system-fault units, --max-failures 0
    systems = summary(out)["systems"]
    wrong = systems["wrong-there"]
    assert wrong["task_completion"]["mean"] == 2 / 3
    assert [p["mean"] for p in wrong["pass_hat_k"]] == [2 / 3, 2 / 3]
    for name in ("crashing", "silent"):
        entry = systems[name]
        assert entry["task_completion"] == wrong["task_completion"], name
        assert entry["pass_at_k"] == wrong["pass_at_k"], name
        assert entry["pass_hat_k"] == wrong["pass_hat_k"], name
    assert systems["crashing"]["units"]["system_faults"] == {"exception": 2}
    assert systems["silent"]["units"]["system_faults"] == {"timeout": 2}
    assert wrong["units"]["system_faults"] == {}

    unit = out / "items" / FAILING / "crashing" / "0"
    call = json.loads((unit / "call.json").read_text())
    assert call["end_reason"] == "agent_error"
    assert call["system_fault"]["cause"] == "exception"
    assert "agent backend crashed" in call["system_fault"]["message"]
    scores = json.loads((unit / "scores.json").read_text())
    assert scores["task_completion"]["value"] == 0.0
    # turn-taking is scored over the partial call; an agent_error ending does not zero it by
    # default (the reference keeps the mean of the scored turns; zeroing is opt-in)
    turn_taking = scores["turn_taking"]
    assert turn_taking["details"]["system_fault"] == "exception"
    assert (
        turn_taking["details"]["missed_turn"] is False and turn_taking["details"]["timeouts"] == []
    )
    silent = json.loads((out / "items" / FAILING / "silent" / "0" / "call.json").read_text())
    assert silent["end_reason"] == "agent_timeout" and silent["system_fault"]["cause"] == "timeout"
    tolerated = CliRunner().invoke(app, ["report", str(out), "--max-failures", "4"])
    assert tolerated.exit_code == 0, tolerated.output


def test_a_breaking_caller_is_retried_then_the_unit_fails_with_its_cause(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(caller_model) as server:
        llm = {"provider": "openai", "base_url": server.url, "model": "caller"}
        config = write_config(tmp_path, ["wrong-there"], caller_llm=llm)
        args = ["run", str(config), "--out", str(out), "--retries", "2", "--retry-backoff", "0"]
        result = CliRunner().invoke(app, args)
        asked = [r.body["messages"][0]["content"] for r in server.posts("/chat/completions")]
    # the failing scenario's model was really asked, 3 tries per call on each of the 3 unit
    # attempts: empty answers are never stored, so no retry replays one from the cache
    assert sum(FAILING_PERSONA in prompt for prompt in asked) == 2 * 3 * 3
    assert result.exit_code == 1, result.output
    assert "failed (simulator): 2 units" in result.output
    assert "retrying" in result.output
    store = RunStore(out)
    failed = store.units.records("failed")
    assert [(u.item_id, u.cause, u.attempts) for u in failed] == [
        (FAILING, "simulator", 3),
        (FAILING, "simulator", 3),
    ]
    assert "the model gave an empty answer without ending the call 3 times" in (
        failed[0].error or ""
    )
    entry = summary(out)["systems"]["wrong-there"]
    assert entry["units"]["failed_by_cause"] == {"simulator": 2}
    # excluded from the means: the two healthy scenarios both pass
    assert entry["task_completion"]["mean"] == 1.0 and entry["task_completion"]["n"] == 4
    markdown = (out / "report" / "summary.md").read_text()
    assert "**Warning:** 2 units failed on voxeval's side (simulator 2)" in markdown
    assert not (out / "items" / FAILING / "wrong-there" / "0" / "call.json").exists()


SPEECH_ONLY = ("agent_speech_fidelity_asr", "stt_wer", "key_entity_accuracy")


class DeafCrashingAgent(CrashingAgent):
    """The crashing agent, exposing no transcript of what it heard (as a speech-to-speech
    agent): the STT metrics cannot run on any of its calls."""

    def respond(self, user_audio: Any, user_text: str | None) -> AgentTurn:
        return dataclasses.replace(super().respond(user_audio, user_text), heard=None)


_system("test-deaf-crashing", DeafCrashingAgent)


def test_a_crashed_text_mode_call_leaves_speech_metrics_not_run(tmp_path: Path) -> None:
    """Metrics that run on no call of this kind (no audio in text mode, no transcript from
    the agent) stay not run on a crashed call too, instead of a failure value (0 entity
    accuracy, WER 1) no other call could get (issue 37, point 14)."""
    out = tmp_path / "run"
    config = write_config(tmp_path, ["deaf-crashing"])
    data = yaml.safe_load(config.read_text())
    data["metrics"] = ["task_completion", *SPEECH_ONLY]
    data["trials"] = 1
    config.write_text(yaml.safe_dump(data))
    result = CliRunner().invoke(app, ["run", str(config), "--out", str(out)])
    assert result.exit_code == 1, result.output  # the crashed call is the system's fault
    unit = out / "items" / FAILING / "deaf-crashing" / "0"
    crashed = json.loads((unit / "scores.json").read_text())
    assert json.loads((unit / "call.json").read_text())["system_fault"]["cause"] == "exception"
    fine = json.loads(
        (out / "items" / "book-1" / "deaf-crashing" / "0" / "scores.json").read_text()
    )
    assert crashed["task_completion"]["value"] == 0.0
    for metric in SPEECH_ONLY:
        assert fine[metric]["value"] is None, metric
        assert crashed[metric]["value"] is None, (metric, crashed[metric])
        assert crashed[metric]["error"] == fine[metric]["error"], metric
        assert crashed[metric]["details"]["system_fault"] == "exception"
    entry = summary(out)["systems"]["deaf-crashing"]
    for metric in SPEECH_ONLY:
        assert metric not in (entry.get("overall") or {}), metric
