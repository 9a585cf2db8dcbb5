"""Scenario schema, suite loading and its error messages, EVA-Bench record import."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from voxeval.benchmarks.eva.clinic_calls import CLINIC_CALLS_PATH
from voxeval.benchmarks.eva.eva_loader import load_eva_records, write_eva_suite
from voxeval.benchmarks.eva.scenario import Scenario, load_scenario_suite
from voxeval.benchmarks.suite_info import resolve_suite
from voxeval.errors import ConfigError

TOOLS = {
    "tools": [
        {
            "name": "verify",
            "kind": "auth",
            "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
            "steps": [{"set_session": {"id": "${id}"}}],
        }
    ]
}


def minimal(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": "s1",
        "current_date_time": "2026-03-16 10:15",
        "user_goal": {"high_level_user_goal": "check", "starting_utterance": "hi",
                      "information_required": {"member ID": "AB-1", "reason": "x"}},
        "user_persona": "calm",
        "initial_db": {"t": {"k": {"v": 1}}},
        "expected_db": {"t": {"k": {"v": 1}}, "session": {"id": "AB-1"}},
        "agent": {"role": "r", "instructions": "i", "tools": ["verify"]},
        "agent_script": [
            {"say": "ok", "tool_calls": [{"name": "verify", "arguments": {"id": "AB-1"}}]}
        ],
    }  # fmt: skip
    data.update(overrides)
    return data


def write_suite(root: Path, scenarios: list[dict[str, Any]], **extra: Any) -> Path:
    (root / "scenarios").mkdir(parents=True)
    (root / "tools.yaml").write_text(yaml.safe_dump(TOOLS))
    for n, sc in enumerate(scenarios):
        (root / "scenarios" / f"{n}.yaml").write_text(yaml.safe_dump(sc))
    suite = {"protocol": "live_call", "domain": "tools.yaml", "scenarios": "scenarios/", **extra}
    (root / "suite.yaml").write_text(yaml.safe_dump(suite))
    return root


def test_builtin_clinic_suite_shape() -> None:
    suite = load_scenario_suite(CLINIC_CALLS_PATH)
    assert suite.name == "clinic-calls" and len(suite.scenarios) >= 20
    categories = {s.category for s in suite.scenarios}
    assert {"single_intent", "multi_intent", "adversarial"} <= categories
    assert len(suite.tools) >= 10
    for scenario in suite.scenarios:
        assert scenario.domain == "clinic"
        assert scenario.agent.instructions and scenario.agent.greeting  # from suite defaults
        assert scenario.agent_script and scenario.user_goal.decision_tree.must_have_criteria
        assert "member ID" in scenario.user_goal.information_required
    s01 = suite.get("clinic-s01-reschedule-free")
    # <LAST_NAME> resolved for English; session strings are compared case-insensitively
    assert s01.expected_session == {"member_id": "KX4-92B7", "last_name": "Lindqvist"}
    assert s01.entities["member ID"] == "KX4-92B7"
    assert "session" not in s01.expected_tables
    info = resolve_suite("clinic-calls")
    assert info.protocol == "live_call" and info.path == CLINIC_CALLS_PATH


def test_suite_defaults_inline_scenarios_and_date_coercion(tmp_path: Path) -> None:
    write_suite(
        tmp_path,
        [],
    )
    suite_file = tmp_path / "suite.yaml"
    raw = minimal(id="inline")
    raw["initial_db"] = {"t": {"k": {"dob": "1980-01-02"}}}
    text = yaml.safe_dump({
        "protocol": "live_call", "domain": "tools.yaml", "name": "mine",
        "defaults": {"category": "adversarial"}, "scenarios": [raw],
    }).replace("'1980-01-02'", "1980-01-02")  # fmt: skip
    suite_file.write_text(text)
    suite = load_scenario_suite(suite_file)
    scenario = suite.scenarios[0]
    assert scenario.category == "adversarial" and scenario.domain == "mine"
    assert scenario.initial_db["t"]["k"]["dob"] == "1980-01-02"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"user_goal": {"starting_utterance": "hi"}}, "user_goal.high_level_user_goal"),
        ({"category": "weird"}, "category"),
        # list tables and plain values are allowed (EVA databases); a non-mapping session is not
        ({"expected_db": {"session": ["not", "a mapping"]}}, "expected_db"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_errors_name_file_scenario_and_field(
    tmp_path: Path, change: dict[str, Any], field: str
) -> None:
    write_suite(tmp_path, [minimal(**change)])
    with pytest.raises(ConfigError) as err:
        load_scenario_suite(tmp_path)
    message = str(err.value)
    assert "0.yaml" in message and "scenario s1" in message and field in message


def test_null_session_loads_validates_and_scores(tmp_path: Path) -> None:
    # issue 37.1: a record whose expected session is null expects no authentication
    from voxeval.protocols.scenario_validation import validate_scenario

    write_suite(tmp_path, [minimal(expected_db={"t": {"k": {"v": 1}}, "session": None})])
    suite = load_scenario_suite(tmp_path)
    scenario = suite.scenarios[0]
    assert scenario.expected_session == {}
    check = validate_scenario(scenario, suite.tools_for(scenario), suite.trust)
    assert check.expected_reached and check.errors == []


def test_suite_default_requires_the_expected_session(tmp_path: Path) -> None:
    # issue 37.1: the reference's rule is the default; a suite may opt out
    write_suite(tmp_path / "a", [minimal()])
    assert load_scenario_suite(tmp_path / "a").task_completion.require_session is True
    write_suite(tmp_path / "b", [minimal()], task_completion={"require_session": False})
    assert load_scenario_suite(tmp_path / "b").task_completion.require_session is False


def test_script_tool_names_are_checked(tmp_path: Path) -> None:
    bad = minimal(agent_script=[{"say": "x", "tool_calls": [{"name": "teleport"}]}])
    write_suite(tmp_path, [bad])
    with pytest.raises(ConfigError, match=r"agent_script\.0\.tool_calls\.0\.name: tool 'teleport'"):
        load_scenario_suite(tmp_path)


def test_duplicate_ids_and_unknown_agent_tools(tmp_path: Path) -> None:
    write_suite(tmp_path / "a", [minimal(), minimal()])
    with pytest.raises(ConfigError, match="appears twice"):
        load_scenario_suite(tmp_path / "a")
    write_suite(
        tmp_path / "b", [minimal(agent={"role": "r", "instructions": "i", "tools": ["nope"]})]
    )
    with pytest.raises(ConfigError, match=r"agent\.tools\.0: unknown tool 'nope'"):
        load_scenario_suite(tmp_path / "b")


def eva_record(**overrides: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "scenario_id": "1.2.1",
        "current_date_time": "2026-06-18 10:50 PST",
        "category": "single",
        "user_goal": {
            "high_level_user_goal": "Move to an earlier flight",
            "decision_tree": {
                "must_have_criteria": ["before 2 PM"],
                "resolution_condition": "done",
            },
            "information_required": {"Confirmation number": "6VORJU", "Last name": "Thompson"},
            "starting_utterance": "Can you move me to an earlier flight today?",
        },
        "user_persona": {"name": "Kenji Thompson", "gender": "man", "description": "direct"},
        "initial_scenario_db": {"reservations": {"6VORJU": {"flight": "SK530"}}},
        "expected_scenario_db": {
            "reservations": {"6VORJU": {"flight": "SK130"}},
            "session": {"confirmation": "6VORJU"},
        },
        "agent_instructions": "policy",
        "tools": ["verify"],
    }
    record.update(overrides)
    return record


def test_eva_records_import(tmp_path: Path) -> None:
    (tmp_path / "tools.yaml").write_text(yaml.safe_dump(TOOLS))
    records = tmp_path / "records.jsonl"
    records.write_text(json.dumps(eva_record()) + "\n")
    (scenario,) = load_eva_records(records, tmp_path / "tools.yaml")
    assert isinstance(scenario, Scenario)
    assert scenario.id == "1.2.1" and scenario.category == "single_intent"
    assert scenario.user_persona == "direct" and scenario.persona_traits["name"] == "Kenji Thompson"
    assert scenario.expected_session == {"confirmation": "6VORJU"}
    suite_file = write_eva_suite(records, tmp_path / "tools.yaml", tmp_path / "out")
    assert load_scenario_suite(suite_file).scenarios[0].id == "1.2.1"


def test_eva_record_errors_name_record_and_field(tmp_path: Path) -> None:
    (tmp_path / "tools.yaml").write_text(yaml.safe_dump(TOOLS))
    record = eva_record()
    del record["expected_scenario_db"]
    (tmp_path / "r.json").write_text(json.dumps([record]))
    with pytest.raises(ConfigError, match=r"r.json: record 1.2.1: field 'expected_scenario_db'"):
        load_eva_records(tmp_path / "r.json", tmp_path / "tools.yaml")
    (tmp_path / "r.json").write_text(json.dumps([eva_record(tools=["rebook_flight"])]))
    with pytest.raises(ConfigError, match="unknown tool 'rebook_flight'"):
        load_eva_records(tmp_path / "r.json", tmp_path / "tools.yaml")


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"agent": "a voice agent"}, r"record 1\.2\.1: field 'agent' must be an object"),
        ({"tools": "verify"}, r"record 1\.2\.1: field 'tools' must be a list of tool names"),
    ],
)
def test_eva_record_agent_of_the_wrong_shape_names_the_field(
    tmp_path: Path, overrides: dict[str, str], message: str
) -> None:
    # these used to fail inside dict()/iteration (a crash, or a string read letter by letter)
    (tmp_path / "tools.yaml").write_text(yaml.safe_dump(TOOLS))
    (tmp_path / "r.json").write_text(json.dumps([eva_record(**overrides)]))
    with pytest.raises(ConfigError, match=message):
        load_eva_records(tmp_path / "r.json", tmp_path / "tools.yaml")
