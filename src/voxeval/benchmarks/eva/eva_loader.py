"""Import released EVA-Bench evaluation records into voxeval scenarios.

A record carries the caller's ``user_goal`` (goal, decision tree, information, starting
utterance), ``user_persona``, the scenario database before (``initial_scenario_db``) and after
(``expected_scenario_db``, with ``session``), ``current_date_time`` and the agent definition.
The reference implementation codes its tools in Python, so the user supplies declarative tool
definitions (``tools.yaml``) for the record's tool names. Field-name variants seen in the
spec (``initial_db``/``scenario_db``, ``expected_db``/``ground_truth``) are accepted.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml
from pydantic import ValidationError

from voxeval.benchmarks.eva.scenario import Scenario
from voxeval.benchmarks.tools.tool_runtime import resolve_scenario_tools
from voxeval.benchmarks.tools.tool_spec import ToolSpec, load_tool_specs
from voxeval.config import format_validation_error
from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject, JSONValue

_ID_FIELDS = ("id", "scenario_id", "record_id")
_INITIAL_FIELDS = ("initial_db", "initial_scenario_db", "scenario_db")
_EXPECTED_FIELDS = ("expected_db", "expected_scenario_db")
_CATEGORIES = {
    "single": "single_intent",
    "single_intent": "single_intent",
    "dual": "multi_intent",
    "double": "multi_intent",
    "triple": "multi_intent",
    "quadruple": "multi_intent",
    "multi": "multi_intent",
    "multi_intent": "multi_intent",
    "adversarial": "adversarial",
}


def read_eva_records(path: Path) -> list[tuple[str, JSONObject]]:
    """(where, record) pairs from a .json (object or list), .jsonl file, or a folder of them."""
    files = sorted([*path.glob("*.json"), *path.glob("*.jsonl")]) if path.is_dir() else [path]
    if not files or not all(f.exists() for f in files):
        raise ConfigError(f"{path}: no EVA-Bench record files (.json/.jsonl) found")
    out: list[tuple[str, JSONObject]] = []
    for file in files:
        text = file.read_text(encoding="utf-8")
        try:
            if file.suffix == ".jsonl":
                rows = [json.loads(line) for line in text.splitlines() if line.strip()]
            else:
                loaded = json.loads(text)
                rows = loaded if isinstance(loaded, list) else [loaded]
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{file}: invalid JSON ({exc})") from exc
        for n, row in enumerate(rows):
            if not isinstance(row, dict):
                raise ConfigError(f"{file}: record {n}: expected a JSON object")
            out.append((f"{file}: record {_first(row, _ID_FIELDS) or n}", row))
    return out


def _first(record: JSONObject, names: tuple[str, ...]) -> JSONValue:
    for name in names:
        if record.get(name) is not None:
            return record[name]
    return None


def _require(record: JSONObject, names: tuple[str, ...], where: str) -> JSONValue:
    value = _first(record, names)
    if value is None:
        raise ConfigError(f"{where}: field {names[0]!r} is missing (also tried {names[1:]})")
    return value


def _persona(value: JSONValue) -> tuple[str, dict[str, str]]:
    if isinstance(value, str):
        return value, {}
    if isinstance(value, dict):
        text = value.get("description") or value.get("persona") or value.get("text") or ""
        traits = {k: str(v) for k, v in value.items() if k in ("name", "gender", "voice", "id")}
        return str(text), traits
    return "", {}


def _expected(record: JSONObject, where: str) -> JSONObject:
    direct = _first(record, _EXPECTED_FIELDS)
    truth = record.get("ground_truth")
    if direct is None and isinstance(truth, dict):
        direct = _first(truth, _EXPECTED_FIELDS) or truth
    if not isinstance(direct, dict):
        raise ConfigError(f"{where}: field 'expected_scenario_db' is missing or not an object")
    return direct


def _agent(record: JSONObject, tools: dict[str, ToolSpec], where: str) -> JSONObject:
    agent = record.get("agent") or {}
    if not isinstance(agent, dict):
        raise ConfigError(f"{where}: field 'agent' must be an object")
    role = agent.get("role") or record.get("agent_role") or record.get("agent_personality") or ""
    instructions = agent.get("instructions") or record.get("agent_instructions") or ""
    all_tools: list[JSONValue] = [*tools]
    names = agent.get("tools") or record.get("tools") or record.get("agent_tools") or all_tools
    if not isinstance(names, list):
        raise ConfigError(f"{where}: field 'tools' must be a list of tool names")
    names = [t.get("name") if isinstance(t, dict) else t for t in names]
    return {"role": str(role or "voice agent"), "instructions": str(instructions), "tools": names}


def eva_record_to_scenario(
    record: JSONObject, where: str, tools: dict[str, ToolSpec], domain: str = ""
) -> Scenario:
    goal = _require(record, ("user_goal",), where)
    if not isinstance(goal, dict):
        raise ConfigError(f"{where}: field 'user_goal' must be an object")
    persona, traits = _persona(_require(record, ("user_persona",), where))
    category = str(record.get("category") or record.get("intent_type") or "single_intent").lower()
    data = {
        "id": str(_require(record, _ID_FIELDS, where)),
        "domain": str(record.get("domain") or domain),
        "category": _CATEGORIES.get(category, "single_intent"),
        "description": str(record.get("description") or record.get("title") or ""),
        "current_date_time": str(_require(record, ("current_date_time",), where)),
        "user_goal": goal,
        "user_persona": persona,
        "persona_traits": traits,
        "initial_db": _require(record, _INITIAL_FIELDS, where),
        "expected_db": _expected(record, where),
        "agent": _agent(record, tools, where),
    }
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(where, exc)) from exc
    resolve_scenario_tools(scenario, tools)  # names every tool the definitions lack
    return scenario


def load_eva_records(records: Path, tools_yaml: Path, domain: str = "") -> list[Scenario]:
    tools = load_tool_specs(tools_yaml)
    return [
        eva_record_to_scenario(record, where, tools, domain)
        for where, record in read_eva_records(records)
    ]


def write_eva_suite(records: Path, tools_yaml: Path, out: Path, name: str | None = None) -> Path:
    """Write ``out/suite.yaml``, ``out/tools.yaml`` and ``out/scenarios/<id>.yaml``."""
    scenarios = load_eva_records(records, tools_yaml)
    (out / "scenarios").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(tools_yaml, out / "tools.yaml")
    for scenario in scenarios:
        data = scenario.model_dump(mode="json", exclude_none=True)
        path = out / "scenarios" / f"{_safe(scenario.id)}.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    suite = {
        "name": name or out.name,
        "protocol": "live_call",
        "description": f"Imported from EVA-Bench records in {records}",
        "domain": "tools.yaml",
        "scenarios": "scenarios/",
    }
    suite_file = out / "suite.yaml"
    suite_file.write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    return suite_file


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)
