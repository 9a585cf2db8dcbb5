"""Tool arguments as the EVA-Bench reference handles them (issue 37.2): its executor checks no
schema and its tools convert argument types, so ``submit_license_request(duration_days=60)``
runs although the agent YAML declares ``duration_days`` a string. Imported suites coerce and
record the mismatch; ``tool_arguments: strict`` keeps refusing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.simulation.helpers import scenario as make_scenario
from voxeval.benchmarks.eva.scenario import Scenario, load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime, parse_tool_specs
from voxeval.benchmarks.tools.argument_coercion import coerce_arguments
from voxeval.benchmarks.tools.tool_spec import HookTrust
from voxeval.errors import ConfigError
from voxeval.protocols.scenario_validation import validate_scenario

HERE = "tests.benchmarks.tools.test_argument_coercion"
SCHEMA = {
    "type": "object",
    "properties": {
        "catalog_id": {"type": "string"},
        "duration_days": {"type": "string"},  # as the released itsm agent YAML declares it
    },
    "required": ["catalog_id"],
}
SEEN: list[Any] = []


def submit_license_request(params: dict, db: dict, call_index: int) -> dict:
    """Release-style tool: its parameter model turns "60" or 60 into the number 60."""
    SEEN.append(params["duration_days"])
    days = int(params["duration_days"])
    db["licenses"][params["catalog_id"]] = {"duration_days": days}
    return {"status": "success", "duration_days": days}


def _eva_tool() -> dict[str, Any]:
    return {
        "name": "submit_license_request",
        "kind": "write",
        "python": f"{HERE}:submit_license_request",
        "python_call": "eva",
        "parameters": SCHEMA,
    }


def _declarative_tool() -> dict[str, Any]:
    return {
        "name": "submit_license_request",
        "kind": "write",
        "parameters": SCHEMA,
        "steps": [
            {"insert": {"table": "licenses", "key": "${catalog_id}",
                        "record": {"duration_days": "${duration_days}"}}},
            {"return": {"status": "success"}},
        ],
    }  # fmt: skip


def _runtime(spec: dict[str, Any], arguments: str) -> ToolRuntime:
    trust = HookTrust((HERE,))
    tools = parse_tool_specs([spec], "tools.yaml", trust)
    data = make_scenario("lic-1")
    data["initial_db"] = {"licenses": {}}
    data["agent"]["tools"] = []
    return ToolRuntime(Scenario.model_validate(data), tools, trust, arguments)  # type: ignore[arg-type]


def test_strict_refuses_a_number_where_the_schema_says_string() -> None:
    runtime = _runtime(_eva_tool(), "strict")
    record = runtime.call("submit_license_request", {"catalog_id": "LIC-0018", "duration_days": 60})
    assert record.valid is False and "is not of type 'string'" in str(record.error)
    assert runtime.db["licenses"] == {}


def test_coerce_runs_the_reference_tool_with_the_arguments_as_sent() -> None:
    SEEN.clear()
    runtime = _runtime(_eva_tool(), "coerce")
    record = runtime.call("submit_license_request", {"catalog_id": "LIC-0018", "duration_days": 60})
    assert (record.valid, record.error) == (True, None)
    assert SEEN == [60]  # the reference hands its tools the agent's arguments unchanged
    assert runtime.db["licenses"] == {"LIC-0018": {"duration_days": 60}}
    assert record.argument_mismatches == (
        'duration_days: sent 60 (number), the schema says string; accepted as "60"',
    )


def test_coerce_gives_declarative_tools_the_declared_type() -> None:
    runtime = _runtime(_declarative_tool(), "coerce")
    record = runtime.call("submit_license_request", {"catalog_id": "LIC-7", "duration_days": 30})
    assert record.valid and record.error is None
    assert runtime.db["licenses"] == {"LIC-7": {"duration_days": "30"}}


@pytest.mark.parametrize(
    ("value", "declared", "converted"),
    [
        (60, "string", "60"),
        (2.5, "string", "2.5"),
        ("60", "integer", 60),
        (" 7 ", "integer", 7),
        ("2.5", "number", 2.5),
        ("12", "number", 12),
        ("TRUE", "boolean", True),
    ],
)
def test_lossless_conversions(value: Any, declared: str, converted: Any) -> None:
    schema = {"type": "object", "properties": {"x": {"type": declared}}}
    out, notes = coerce_arguments({"x": value}, schema)
    assert out == {"x": converted} and type(out["x"]) is type(converted) and len(notes) == 1


@pytest.mark.parametrize(
    ("value", "declared"),
    [("sixty", "integer"), ("2.5", "integer"), (True, "string"), ([1], "string"), (1, "boolean")],
)
def test_lossy_or_structural_mismatches_are_left_to_the_schema(value: Any, declared: str) -> None:
    schema = {"type": "object", "properties": {"x": {"type": declared}}}
    assert coerce_arguments({"x": value}, schema) == ({"x": value}, [])


def _suite(root: Path, arguments: str | None) -> Path:
    root.mkdir(parents=True)
    (root / "tools.yaml").write_text(yaml.safe_dump({"tools": [_eva_tool()]}))
    data = make_scenario("lic-1")
    data["initial_db"] = {"licenses": {}}
    data["expected_db"] = {"licenses": {"LIC-0018": {"duration_days": 60}}}
    data["agent"]["tools"] = ["submit_license_request"]
    data["agent_script"] = [
        {"say": "Done.", "tool_calls": [{"name": "submit_license_request",
                                         "arguments": {"catalog_id": "LIC-0018",
                                                       "duration_days": 60}}]}
    ]  # fmt: skip
    suite: dict[str, Any] = {"protocol": "live_call", "domain": "tools.yaml", "scenarios": [data]}
    if arguments is not None:
        suite["tool_arguments"] = arguments
    (root / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    return root


def test_suite_setting_decides_validation(tmp_path: Path) -> None:
    strict = load_scenario_suite(_suite(tmp_path / "strict", None), trusted_modules=[HERE])
    assert strict.tool_arguments == "strict"
    s = strict.scenarios[0]
    refused = validate_scenario(
        s, strict.tools_for(s), strict.trust, strict.task_completion, strict.tool_arguments
    )
    assert not refused.expected_reached and "is not of type 'string'" in refused.errors[0]
    loose = load_scenario_suite(_suite(tmp_path / "coerce", "coerce"), trusted_modules=[HERE])
    s = loose.scenarios[0]
    check = validate_scenario(
        s, loose.tools_for(s), loose.trust, loose.task_completion, loose.tool_arguments
    )
    assert check.expected_reached and check.errors == []
    assert check.notes == [
        'step 0: submit_license_request({"catalog_id": "LIC-0018", "duration_days": 60}): '
        "argument type converted: duration_days: sent 60 (number), the schema says string; "
        'accepted as "60"'
    ]


def test_bad_setting_names_the_field(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"suite\.yaml: tool_arguments: expected 'strict'"):
        load_scenario_suite(_suite(tmp_path / "bad", "loose"), trusted_modules=[HERE])


def test_imported_suites_coerce_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.benchmarks.eva_release_fixture import DOMAIN, MODULE, install_release
    from voxeval.benchmarks.eva.eva_release import import_release
    from voxeval.benchmarks.eva.eva_release_writer import write_release_suite

    release = install_release(tmp_path / "eva", monkeypatch)
    suite_file = write_release_suite(
        import_release(release, DOMAIN, "en", python_tools=True), tmp_path / "suite"
    )
    assert yaml.safe_load(suite_file.read_text())["tool_arguments"] == "coerce"
    assert load_scenario_suite(suite_file, trusted_modules=[MODULE]).tool_arguments == "coerce"


def test_tool_call_validity_lists_converted_calls_as_valid(tmp_path: Path) -> None:
    from voxeval.scoring.calls.call_diagnostics import tool_call_validity
    from voxeval.scoring.calls.live_call_record import LiveCallRecord
    from voxeval.simulation.timeline import Timeline, ToolEvent

    note = 'duration_days: sent 60 (number), the schema says string; accepted as "60"'
    timeline = Timeline()
    timeline.tools.append(
        ToolEvent(t=1.0, turn=1, name="submit_license_request", arguments={"duration_days": 60},
                  result={"status": "success"}, argument_mismatches=[note])
    )  # fmt: skip
    timeline.write_jsonl(tmp_path / "events.jsonl")
    reread = Timeline.read_jsonl(tmp_path / "events.jsonl")
    assert reread.tools[0].argument_mismatches == [note]
    score = tool_call_validity(LiveCallRecord(timeline=reread))
    assert score.value == 1.0
    assert score.details["coerced"] == [{"name": "submit_license_request", "mismatches": [note]}]
