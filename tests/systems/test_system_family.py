"""One family of systems under test: one registry kind, capabilities checked on the class,
option errors that name the system and field (the 0.1 spellings: test_legacy_spellings.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse
from tests.runner.test_plan_check import (
    assert_refused_before_any_call,
    live_call_config,
    single_turn_config,
    write,
)
from voxeval.api.context import RunContext
from voxeval.cli.main import app
from voxeval.config import RunConfig, SystemSpec
from voxeval.errors import ConfigError, UnknownComponent
from voxeval.registry import lookup, names
from voxeval.store import RunStore
from voxeval.systems import (
    CALL,
    REPLY,
    CascadeAgent,
    CascadeSystem,
    TurnSystemCall,
    build_system,
    capabilities_of,
    missing_capability,
    open_call,
)


@pytest.fixture
def server():
    """Answers anything with HTTP 500: a test passes only if nothing is ever sent."""
    with FakeOpenAIServer(lambda path, body: FakeResponse(status=500)) as fake:
        yield fake


def test_one_registry_kind_lists_the_former_agents() -> None:
    assert {"cascade", "hybrid", "openai-realtime", "websocket", "scripted"} <= set(names("system"))
    assert {"http", "openai-audio", "replay"} <= set(names("system"))
    with pytest.raises(UnknownComponent):
        lookup("agent", "scripted")


@pytest.mark.parametrize(
    ("system", "expected"),
    [
        ("cascade", {REPLY, CALL}),
        ("http", {REPLY, CALL}),
        ("openai-audio", {REPLY, CALL}),
        ("replay", {REPLY}),
        ("scripted", {CALL}),
        ("hybrid", {CALL}),
        ("openai-realtime", {CALL}),
        ("websocket", {CALL}),
    ],
)
def test_capabilities_are_declared_on_the_class(system: str, expected: set[str]) -> None:
    assert capabilities_of(lookup("system", system)) == expected


def test_missing_capability_names_the_system_and_what_it_lacks() -> None:
    realtime = SystemSpec(name="rt", type="openai-realtime")
    message = missing_capability(realtime, "single_turn", REPLY)
    assert message is not None
    assert "'rt'" in message and "openai-realtime" in message and "reply(history)" in message
    assert missing_capability(realtime, "live_call", CALL) is None
    replay = SystemSpec(name="rec", type="replay", folder="x")
    assert "holding a live call" in str(missing_capability(replay, "live_call", CALL))
    assert missing_capability(SystemSpec(name="c", type="cascade"), "single_turn", REPLY) is None


def test_the_cascade_serves_both_protocols_from_one_class(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    llm = {"provider": "openai", "base_url": openai_server.url, "model": "m"}
    spec = dict(
        name="c", type="cascade", llm=llm, asr=None, tts="espeak", max_tool_rounds=3, voice=None
    )
    config = RunConfig(suite="x", systems=[spec])
    ctx = RunContext(config=config, store=RunStore(tmp_path / "run"))
    system = build_system(SystemSpec(**spec), ctx)  # type: ignore[arg-type]
    assert isinstance(system, CascadeSystem)
    assert callable(system.reply)
    session = system.open_call()
    assert isinstance(session, CascadeAgent)
    assert session.max_tool_rounds == 3
    assert session.max_tokens is None  # single-turn's 160 cap is not applied to calls
    assert session.system_prompt is None  # calls use the scenario's prompt
    assert session.tts is None  # an explicit voice: null means no voice of its own
    assert system.open_call() is not session  # a fresh session per call
    assert openai_server.requests == []  # building and opening ask the LLM nothing


@pytest.mark.parametrize(
    ("spec", "field", "allowed"),
    [
        ({"type": "openai-realtime", "modle": "x"}, "modle", "model"),
        ({"type": "scripted", "scritp": "wrong"}, "scritp", "script"),
        ({"type": "cascade", "temprature": 0.5}, "temprature", "temperature"),
        ({"type": "websocket", "comand": "x"}, "comand", "command"),
        ({"type": "http", "url": "http://x", "timeout": 3}, "timeout", "timeout_s"),
    ],
)
def test_unknown_option_names_system_field_and_the_allowed_options(
    spec: dict[str, object], field: str, allowed: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        build_system(SystemSpec(name="sut", **spec))  # type: ignore[arg-type]
    message = str(caught.value)
    assert f"system 'sut' (type {spec['type']}): {field}: unknown option" in message
    assert allowed in message.split("options:", 1)[1]


def test_a_call_only_system_in_a_single_turn_run_is_refused_before_any_call(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    config = single_turn_config(tmp_path, server.url)
    config["systems"] = [{"name": "rt", "type": "openai-realtime", "url": "ws://127.0.0.1:9"}]
    output = assert_refused_before_any_call(write(tmp_path, config), server, tmp_path)
    output = " ".join(output.split())  # the console wraps long lines
    assert "systems.0 (rt).type" in output
    assert "cannot serve the single_turn protocol" in output


def test_a_replay_system_in_a_live_call_run_is_refused_before_any_call(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    config = live_call_config(tmp_path)
    (tmp_path / "replies").mkdir()
    config["systems"] = [{"name": "rec", "type": "replay", "folder": str(tmp_path / "replies")}]
    path = write(tmp_path, config)
    output = " ".join(assert_refused_before_any_call(path, server, tmp_path).split())
    assert "cannot serve the live_call protocol" in output and "'rec'" in output


def test_a_turn_system_is_wrapped_in_the_adapter_for_calls() -> None:
    http = build_system(SystemSpec(name="web", type="http", url="http://127.0.0.1:9/reply"))
    session = open_call(http)
    assert isinstance(session, TurnSystemCall) and session.system is http
    assert session.name == "web"


def test_config_yaml_with_new_type_runs_like_the_legacy_one(tmp_path: Path) -> None:
    """The same scripted system written both ways gives the same summary numbers."""
    results = []
    for n, system in enumerate(
        [
            {"name": "ref", "type": "scripted"},
            {"name": "ref", "type": "scripted"},
        ]
    ):
        config = live_call_config(tmp_path / f"c{n}")
        config["systems"] = [system]
        config["perturbations"] = []
        path = tmp_path / f"c{n}.yaml"
        path.write_text(yaml.safe_dump(config))
        out = tmp_path / f"run{n}"
        result = CliRunner().invoke(app, ["run", str(path), "--out", str(out)])
        assert result.exit_code == 0, result.output
        summary = yaml.safe_load((out / "report" / "summary.json").read_text())
        results.append(summary["systems"]["ref"]["task_completion"])
    assert results[0] == results[1]
    assert results[0]["mean"] == 1.0
