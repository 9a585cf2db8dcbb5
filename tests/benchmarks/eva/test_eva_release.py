"""Importing an EVA-Bench release folder as shipped (fixture in tests/benchmarks/
eva_release_fixture.py): records, per-record initial databases, agent YAML, python tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.benchmarks.eva_release_fixture import (
    DOMAIN,
    MODULE,
    forget_tool_module,
    install_release,
    records,
)
from tests.benchmarks.eva_release_fixture import write_release as write_fixture
from voxeval.benchmarks.eva.eva_agent_config import json_schema_type, tool_declaration
from voxeval.benchmarks.eva.eva_release import import_release
from voxeval.benchmarks.eva.eva_release_writer import write_release_suite
from voxeval.benchmarks.eva.eva_trace import trace_to_script
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.errors import ConfigError


@pytest.fixture
def release(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return install_release(tmp_path / "eva", monkeypatch)


def test_release_imports_every_record_with_python_tools(release: Path) -> None:
    result = import_release(release, DOMAIN, "en", python_tools=True)
    assert (result.records, result.failures, result.missing_tools) == (4, [], [])
    assert [s.id for s in result.scenarios] == ["1.1.1", "1.2.1", "2.1.1", "3.1.1"]
    first = result.scenarios[0]
    assert first.initial_db["_current_date"] == "2026-03-17"  # non-table key kept
    assert first.initial_db["parcels"]["PX4471"]["recipient"]["last_name"] == "<LAST_NAME>"
    assert first.user_persona == "You are brief and polite."
    assert first.persona_traits == {"name": "<FIRST_NAME> <LAST_NAME>", "gender": "woman"}
    assert first.culture_overrides["es"]["last_name"] == "Núñez"
    assert first.expected_session == {"tracking_number": "PX4471", "last_name": "<LAST_NAME>"}
    # the trace becomes the scripted path: calls made before each agent utterance
    assert [(s.say[:12], [c.name for c in s.tool_calls]) for s in first.agent_script] == [
        ("Hello, parce", []),
        ("I found your", ["get_parcel"]),
        ("Done, your r", ["issue_refund"]),
    ]
    assert first.agent_script[2].tool_calls[0].arguments["amount"] == 12.5
    assert first.agent.tools == ["get_parcel", "reroute_parcel", "issue_refund"]
    assert first.agent.greeting == "Hello! How can I help you today?"  # initial_messages.yaml
    assert result.python_module == MODULE
    refund = next(t for t in result.tools if t["name"] == "issue_refund")
    assert refund["python"] == f"{MODULE}:issue_refund" and refund["python_call"] == "eva"
    assert refund["parameters"]["properties"]["amount"]["type"] == "number"  # float
    assert refund["parameters"]["required"] == ["tracking_number", "amount"]


def test_written_suite_loads_in_any_language(release: Path, tmp_path: Path) -> None:
    result = import_release(release, DOMAIN, "es", python_tools=True)
    suite_file = write_release_suite(result, tmp_path / "out")
    assert yaml.safe_load(suite_file.read_text())["language"] == "es"
    spanish = load_scenario_suite(suite_file, trusted_modules=[MODULE])
    scenario = spanish.get("1.1.1")
    recipient = scenario.initial_db["parcels"]["PX4471"]["recipient"]
    assert recipient["last_name"] == "Núñez"
    assert recipient["email"] == "lucia.nunez@example.com"  # romanized, lower case
    assert scenario.user_goal.starting_utterance == "Hola, llamo por mi paquete."
    assert scenario.agent_script[1].tool_calls[0].arguments["last_name"] == "Núñez"
    assert scenario.agent.greeting == "¡Hola! ¿En qué le ayudo?"
    english = load_scenario_suite(suite_file, trusted_modules=[MODULE], language="en")
    assert english.get("1.1.1").expected_session["last_name"] == "Lopez"


def test_python_tools_need_explicit_trust_to_load(release: Path, tmp_path: Path) -> None:
    suite_file = write_release_suite(import_release(release, DOMAIN, python_tools=True), tmp_path)
    assert yaml.safe_load(suite_file.read_text())["python_tools_module"] == MODULE
    with pytest.raises(ConfigError, match="is not trusted"):
        load_scenario_suite(suite_file)


def test_every_failing_record_is_reported_with_its_field(tmp_path: Path) -> None:
    recs = records()
    no_persona = json.loads(json.dumps(recs[1]))
    no_persona[0]["id"] = "9.1.1"
    del no_persona[0]["user_config"]["user_persona"]
    bad_tool = json.loads(json.dumps(recs[2]))
    bad_tool[0]["id"] = "9.2.1"
    bad_tool[0]["ground_truth"]["expected_trace"]["trace"][3]["tool_name"] = "teleport"
    no_french = json.loads(json.dumps(recs[0]))
    no_french[0]["id"] = "9.3.1"
    forget_tool_module()
    root = write_fixture(tmp_path / "eva", [*recs, no_persona, bad_tool, no_french])
    (root / "data" / f"{DOMAIN}_scenarios" / "1.2.1.json").unlink()
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(root / "src"))
        result = import_release(root, DOMAIN, "en", python_tools=True)
        french = import_release(root, DOMAIN, "fr", python_tools=True)
    failures = {f.record: (f.field, f.reason) for f in result.failures}
    assert failures["1.2.1"] == (
        f"{DOMAIN}_scenarios/1.2.1.json",
        "initial database file not found",
    )
    assert failures["9.1.1"][0] == "user_config.user_persona"
    assert failures["9.2.1"][0] == "ground_truth.expected_trace.trace (agent turn 2)"
    assert "'teleport' has no definition" in failures["9.2.1"][1]
    assert set(failures) == {"1.2.1", "9.1.1", "9.2.1"}
    assert [s.id for s in result.scenarios] == ["1.1.1", "2.1.1", "3.1.1", "9.3.1"]
    assert {f.field for f in french.failures} >= {"starting_utterances.fr"}


def test_without_python_tools_the_report_names_tools_without_definition(
    release: Path, tmp_path: Path
) -> None:
    definitions = tmp_path / "tools.yaml"
    definitions.write_text(
        yaml.safe_dump(
            {
                "tools": [
                    {
                        "name": "get_parcel",
                        "kind": "auth",
                        "parameters": {"type": "object", "properties": {}},
                        "steps": [{"return": {"status": "ok"}}],
                    }
                ]
            }
        )
    )
    result = import_release(release, DOMAIN, tool_definitions=definitions)
    assert result.missing_tools == ["reroute_parcel", "issue_refund"]
    assert result.python_module == ""
    # only the refusal record uses nothing but the defined tool
    assert [s.id for s in result.scenarios] == ["3.1.1"]
    assert all("has no definition" in f.reason for f in result.failures)


def test_unimportable_tool_module_is_a_note_not_a_crash(tmp_path: Path) -> None:
    forget_tool_module()
    root = write_fixture(tmp_path / "eva")  # src/ not on sys.path
    result = import_release(root, DOMAIN, python_tools=True)
    assert result.scenarios == [] and len(result.failures) == 4
    assert "cannot be imported" in result.notes[0] and "PYTHONPATH" in result.notes[0]
    with pytest.raises(ConfigError, match="none of the 4 records"):
        write_release_suite(result, tmp_path / "out")


def test_missing_release_files_name_the_path(tmp_path: Path) -> None:
    root = write_fixture(tmp_path / "eva")
    with pytest.raises(ConfigError, match=r"airline_dataset.json: not found.*domains: parcel"):
        import_release(root, "airline")


def test_agent_parameter_types_map_to_json_schema() -> None:
    assert [json_schema_type(t, "x") for t in ("float", "int", "str", "bool", "list")] == [
        "number",
        "integer",
        "string",
        "boolean",
        "array",
    ]
    with pytest.raises(ConfigError, match=r"tools\.3: required_parameters\.0\.type: unknown"):
        tool_declaration(
            {"id": "t", "required_parameters": [{"name": "a", "type": "decimal"}]}, "tools.3"
        )
    assert tool_declaration({"id": "t", "tool_type": "auth"}, "x")["kind"] == "auth"
    assert tool_declaration({"id": "t", "tool_type": "transfer"}, "x")["kind"] == "system"
    declared = tool_declaration(
        {
            "id": "add",
            "tool_type": "write",
            "required_parameters": [
                {"name": "ids", "type": "array", "items": {"type": "string"}},
            ],
            "optional_parameters": [{"name": "n", "type": "float"}],
        },
        "x",
    )
    assert declared["parameters"] == {
        "type": "object",
        "properties": {
            "ids": {"type": "array", "items": {"type": "string"}},
            "n": {"type": "number"},
        },
        "required": ["ids"],
    }


def test_trace_groups_tool_calls_before_each_agent_turn() -> None:
    events = [
        {"event_type": "user_utterance", "utterance": "hi"},
        {"event_type": "tool_call", "tool_name": "a", "params": {"x": 1}},
        {"event_type": "tool_response", "tool_name": "a", "status": "success"},
        {"event_type": "tool_call", "tool_name": "b", "params": {}},
        {"event_type": "agent_utterance", "utterance": "done"},
        {"event_type": "tool_call", "tool_name": "c", "params": {}},
    ]
    assert trace_to_script(events, "r") == [
        {
            "say": "done",
            "tool_calls": [{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {}}],
        },
        {"say": "", "tool_calls": [{"name": "c", "arguments": {}}]},
    ]
    with pytest.raises(ConfigError, match=r"trace.0.params: expected a mapping"):
        trace_to_script([{"event_type": "tool_call", "tool_name": "a", "params": []}], "r")


def test_agent_parameters_that_are_not_a_list_name_the_group() -> None:
    with pytest.raises(ConfigError, match=r"tools\.2: optional_parameters: expected a list"):
        tool_declaration({"id": "t", "optional_parameters": {"name": "a"}}, "tools.2")
