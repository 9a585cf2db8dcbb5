"""Scenario databases with plain values (``_current_date``) and tables stored as lists: they
load, run and compare; declarative tools that treat them as record tables fail clearly."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tests.simulation.helpers import scenario, write_suite
from voxeval.benchmarks.eva.scenario import Scenario, load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime, parse_tool_specs
from voxeval.benchmarks.tools.tool_ops import ToolContext, ToolFailure
from voxeval.benchmarks.tools.tool_spec import check_tables
from voxeval.errors import ConfigError
from voxeval.scoring.calls.task_completion import compare_final_state

EXTRA: dict[str, Any] = {
    "_current_date": "2026-03-02",
    "error_injections": [{"tool": "book_visit", "times": 1}],
}


def _mixed_scenario(**changes: Any) -> dict[str, Any]:
    data = scenario()
    data["initial_db"] = {**data["initial_db"], **copy.deepcopy(EXTRA)}
    data["expected_db"] = {**data["expected_db"], **copy.deepcopy(EXTRA)}
    return {**data, **changes}


def test_plain_values_and_list_tables_load_run_and_score(tmp_path: Path) -> None:
    suite = load_scenario_suite(write_suite(tmp_path, [_mixed_scenario()]))
    loaded = suite.scenarios[0]
    assert loaded.initial_db["_current_date"] == "2026-03-02"
    assert loaded.expected_tables["error_injections"] == EXTRA["error_injections"]
    runtime = ToolRuntime(loaded, suite.tools)
    for step in loaded.agent_script:
        for call in step.tool_calls:
            assert runtime.call(call.name, call.arguments).error is None
    final = runtime.final_state()
    assert final["_current_date"] == "2026-03-02"
    assert compare_final_state(loaded.expected_db, final).value == 1.0


def _tool(name: str, kind: str, step: dict[str, Any]) -> dict[str, Any]:
    params = {"type": "object", "properties": {}}
    return {"name": name, "kind": kind, "parameters": params, "steps": [step]}


LOOKUP_DATE = _tool(
    "read_date", "read", {"lookup": {"table": "_current_date", "key": "'x'", "as": "d"}}
)
INSERT_LIST = _tool(
    "inject", "write", {"insert": {"table": "error_injections", "key": "'k'", "record": {"a": 1}}}
)


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        (LOOKUP_DATE, "'_current_date' holds a plain value (str), not records by key"),
        (INSERT_LIST, "'error_injections' holds a list of 1 items, not records by key"),
    ],
)
def test_tools_naming_a_non_table_fail_at_load(tool: dict[str, Any], message: str) -> None:
    tools = parse_tool_specs([tool], "tools.yaml")
    with pytest.raises(ConfigError) as err:
        check_tables(tools, {"members": {}, **EXTRA}, "suite.yaml: scenario s1")
    assert message in str(err.value) and f"tool {tool['name']!r}" in str(err.value)
    check_tables(tools, set(EXTRA), "names only: existence is all that is checked")


def test_suite_load_names_the_scenario_and_table(tmp_path: Path) -> None:
    data = _mixed_scenario()
    data["agent"] = {**data["agent"], "tools": ["verify_member", LOOKUP_DATE]}
    with pytest.raises(ConfigError, match=r"scenario book-1.*'_current_date' holds a plain"):
        load_scenario_suite(write_suite(tmp_path, [data]))


@pytest.mark.parametrize(
    ("tool", "table"), [(LOOKUP_DATE, "_current_date"), (INSERT_LIST, "error_injections")]
)
def test_runtime_refuses_non_tables_with_a_tool_error(tool: dict[str, Any], table: str) -> None:
    # built directly (no load-time check): the call is refused naming the entry, no crash
    data = _mixed_scenario()
    scen = Scenario.model_validate({**data, "agent": {**data["agent"], "tools": []}})
    runtime = ToolRuntime(scen, parse_tool_specs([tool], "tools.yaml"))
    record = runtime.call(tool["name"], {})
    assert record.result["error"] == "tool_error"
    assert f"{table!r} holds" in str(record.error) and "not a table of records" in str(record.error)
    assert runtime.db[table] == EXTRA[table]


def test_table_accessor_creates_only_when_asked() -> None:
    ctx = ToolContext(db={"n": 3}, session={}, params={}, now="2026-03-02")
    assert ctx.table("new", create=True) == {} and ctx.db["new"] == {}
    with pytest.raises(ToolFailure, match="does not exist"):
        ctx.table("missing")
    with pytest.raises(ToolFailure, match=r"'n' holds a plain value \(int\)"):
        ctx.table("n")


def test_expected_session_must_still_be_a_mapping() -> None:
    with pytest.raises(ValueError, match="'session' must be a mapping"):
        Scenario.model_validate(_mixed_scenario(expected_db={"session": ["x"]}))
