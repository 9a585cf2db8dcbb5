"""Import an EVA-Bench release folder, as shipped, into a voxeval live-call suite.

The release layout for a domain: ``data/<domain>_dataset.json`` (a JSON list of records),
``data/<domain>_scenarios/<id>.json`` (each record's initial database, with plain values
such as ``_current_date`` beside its tables) and ``configs/agents/<domain>_agent.yaml`` (role,
policy, tool schemas and ``tool_module_path``). A record gives ``id``, ``current_date_time``,
``user_goal``, ``user_config.user_persona``, ``starting_utterances`` per language,
``culture_overrides``/``romanized_culture_overrides``, ``expected_flow`` and ``ground_truth``
(``expected_scenario_db`` with its ``session``, and ``expected_trace``, which becomes the
scripted agent's path).

Placeholders (``<LAST_NAME>``...) stay in the written scenarios with their overrides, so one
import serves every language; the suite's ``language:`` picks the one resolved at load.
``<LOC:Name>`` place tokens and the databases' ``name_aliases`` come from the release's
``data/<domain>_aliases/`` as in the reference (benchmarks/eva/eva_locations.py). Keys of
``user_goal`` beyond the known ones are kept. Every record that can be converted is; each one
that cannot is reported with its id and field.

Tools: ``--tools`` declarations win; otherwise the release's Python tool functions
(``tool_module_path``) are used. They are found in the release's ``src/`` and read without being
run (their names only), so the import itself runs no release code; the written suite names the
module and a run must still trust it (``--trust``). ``--python-tools`` instead imports the
module from ``PYTHONPATH`` (and lets ``--report`` run it).
"""

from __future__ import annotations

import ast
import importlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import ValidationError

from voxeval.benchmarks.eva.eva_agent_config import EvaAgentConfig, load_eva_agent_config
from voxeval.benchmarks.eva.eva_locations import (
    AliasFileError,
    LocationTokens,
    load_alias_index,
    spoken_name,
    with_name_aliases,
)
from voxeval.benchmarks.eva.eva_trace import TRACE_FIELD, trace_events, trace_to_script
from voxeval.benchmarks.eva.scenario import Scenario
from voxeval.benchmarks.jsonl_file import read_json_list
from voxeval.config import load_yaml
from voxeval.errors import ConfigError, VoxevalError
from voxeval.json_types import JSONObject, JSONValue

CURRENT_DATE_KEY = "_current_date"


@dataclass(frozen=True)
class RecordFailure:
    record: str  # the record's id (or its position when it has none)
    field: str  # the field that could not be converted
    reason: str


@dataclass
class EvaImport:
    """The outcome of reading one domain of a release."""

    domain: str
    language: str
    records: int
    scenarios: list[Scenario] = field(default_factory=list)
    failures: list[RecordFailure] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)  # declarations to write
    missing_tools: list[str] = field(default_factory=list)  # agent tools with no definition
    python_module: str = ""  # the module python tools come from ("" when none)
    # True when the module was imported at the user's request (--python-tools), so the import
    # report may run it; False when its tools were found by reading the release's source
    python_module_imported: bool = False
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ReleasePaths:
    dataset: Path
    scenarios: Path
    agent: Path
    greetings: Path  # configs/agents/initial_messages.yaml: the agent's greeting per language
    aliases: Path  # data/<domain>_aliases/: place names (<LOC:...>, name_aliases); optional
    source: Path  # the release's src/ (where tool_module_path's file is)

    @classmethod
    def of(cls, root: Path, domain: str) -> ReleasePaths:
        paths = cls(
            dataset=root / "data" / f"{domain}_dataset.json",
            scenarios=root / "data" / f"{domain}_scenarios",
            agent=root / "configs" / "agents" / f"{domain}_agent.yaml",
            greetings=root / "configs" / "agents" / "initial_messages.yaml",
            aliases=root / "data" / f"{domain}_aliases",
            source=root / "src",
        )
        for path in (paths.dataset, paths.scenarios, paths.agent):
            if not path.exists():
                raise ConfigError(
                    f"{path}: not found; expected an EVA-Bench release folder with "
                    f"data/{domain}_dataset.json, data/{domain}_scenarios/ and "
                    f"configs/agents/{domain}_agent.yaml (domains: {_domains(root)})"
                )
        return paths


def _domains(root: Path) -> str:
    found = sorted(p.name.removesuffix("_dataset.json") for p in root.glob("data/*_dataset.json"))
    return ", ".join(found) or "none found"


class _RecordError(VoxevalError):
    def __init__(self, field_path: str, reason: str) -> None:
        super().__init__(f"{field_path}: {reason}")
        self.field = field_path
        self.reason = reason


def import_release(
    root: Path,
    domain: str,
    language: str = "en",
    *,
    python_tools: bool = False,
    tool_definitions: Path | None = None,
) -> EvaImport:
    """Convert every record of ``domain`` it can; the rest become :class:`RecordFailure`."""
    paths = ReleasePaths.of(root, domain)
    agent = load_eva_agent_config(paths.agent)
    agent.greeting = _greeting(paths.greetings, language)
    records = read_json_list(paths.dataset, "records")
    try:
        places = load_alias_index(paths.aliases)
    except AliasFileError as exc:
        raise ConfigError(str(exc)) from exc
    result = EvaImport(domain=domain, language=language, records=len(records))
    available = _tool_library(agent, python_tools, tool_definitions, result, paths)
    for n, record in enumerate(records):
        record_id = str(record.get("id", f"#{n}")) if isinstance(record, dict) else f"#{n}"
        try:
            if not isinstance(record, dict):
                raise _RecordError("<record>", "expected a JSON object")
            scenario = convert_record(
                record, paths, agent, available, domain, language, places, result.notes
            )
        except _RecordError as exc:
            result.failures.append(RecordFailure(record_id, exc.field, exc.reason))
            continue
        result.scenarios.append(scenario)
    return result


def _tool_library(
    agent: EvaAgentConfig,
    python_tools: bool,
    definitions: Path | None,
    result: EvaImport,
    paths: ReleasePaths,
) -> set[str]:
    """Fill ``result.tools`` with the declarations to write; return the usable tool names.
    Python tools come from the imported module (``python_tools``), else, without
    ``definitions``, from the names the release's source file defines."""
    user: dict[str, dict[str, Any]] = {}
    if definitions is not None:
        data = load_yaml(definitions)
        items = data.get("tools") if isinstance(data, dict) else data
        if not isinstance(items, list):
            raise ConfigError(f"{definitions}: expected a 'tools' list")
        user = {str(t.get("name")): t for t in items if isinstance(t, dict)}
    module = _python_module(agent, result) if python_tools else None
    defined: set[str] = set()
    if module is not None:
        result.python_module_imported = True
        defined = {n for n in dir(module) if callable(getattr(module, n, None))}
    elif not python_tools and definitions is None:
        defined = _functions_in_release(agent, paths, result)
    for declaration in agent.tools:
        name = str(declaration["name"])
        if name in user:
            result.tools.append(user[name])
        elif name in defined:
            ref = f"{agent.tool_module_path}:{name}"
            result.tools.append({**declaration, "python": ref, "python_call": "eva"})
        else:
            result.missing_tools.append(name)
    result.tools += [t for name, t in user.items() if name not in agent.tool_names()]
    if any(t.get("python_call") == "eva" for t in result.tools):
        result.python_module = agent.tool_module_path
    return {str(t["name"]) for t in result.tools}


def _functions_in_release(
    agent: EvaAgentConfig, paths: ReleasePaths, result: EvaImport
) -> set[str]:
    """Names of the top-level functions of ``tool_module_path``'s file in the release's
    ``src/``, read without running it (the reference loads the same file)."""
    if not agent.tool_module_path:
        return set()
    parts = agent.tool_module_path.split(".")
    candidates = [
        paths.source.joinpath(*parts).with_suffix(".py"),
        paths.source.joinpath(*parts, "__init__.py"),
    ]
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        result.notes.append(
            f"{agent.path}: tool_module_path {agent.tool_module_path!r}: no file "
            f"{candidates[0]} in the release; give --tools, or --python-tools with the module "
            "on PYTHONPATH"
        )
        return set()
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as exc:
        result.notes.append(f"{path}: cannot be read as Python ({exc}); python tools unavailable")
        return set()
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and not node.name.startswith("_")
    }


def _python_module(agent: EvaAgentConfig, result: EvaImport) -> ModuleType | None:
    if not agent.tool_module_path:
        result.notes.append(f"{agent.path}: no tool_module_path; python tools unavailable")
        return None
    try:
        return importlib.import_module(agent.tool_module_path)
    except Exception as exc:  # any import failure: report it, tools then need definitions
        result.notes.append(
            f"{agent.path}: tool_module_path {agent.tool_module_path!r} cannot be imported "
            f"({type(exc).__name__}: {exc}); put the release's src/ on PYTHONPATH"
        )
        return None


def convert_record(
    record: JSONObject,
    paths: ReleasePaths,
    agent: EvaAgentConfig,
    available: set[str],
    domain: str,
    language: str,
    places: Mapping[str, JSONObject] | None = None,
    notes: list[str] | None = None,
) -> Scenario:
    """One record as a scenario (placeholders kept); raises :class:`_RecordError`.
    ``places`` is the release's alias index (``<LOC:...>`` tokens, ``name_aliases``)."""
    places = places or {}
    record_id = _required(record, "id")
    goal = _required(record, "user_goal")
    if not isinstance(goal, dict):
        raise _RecordError("user_goal", "expected an object")
    utterances = record.get("starting_utterances") or {}
    if not isinstance(utterances, dict):
        raise _RecordError("starting_utterances", "expected a map of language -> text")
    opening = utterances.get(language) or goal.get("starting_utterance")
    if not isinstance(opening, str) or not opening:
        raise _RecordError(f"starting_utterances.{language}", "missing for this language")
    user_config = record.get("user_config") or {}
    persona = user_config.get("user_persona") if isinstance(user_config, dict) else None
    if not isinstance(persona, str):
        raise _RecordError("user_config.user_persona", "missing or not text")
    truth = record.get("ground_truth")
    expected = truth.get("expected_scenario_db") if isinstance(truth, dict) else None
    if not isinstance(expected, dict):
        raise _RecordError("ground_truth.expected_scenario_db", "missing or not an object")
    try:
        script = trace_to_script(trace_events(record, "record"), "record")
    except ConfigError as exc:
        raise _RecordError(TRACE_FIELD, str(exc).removeprefix("record: ")) from exc
    for s, step in enumerate(script):
        for call in step["tool_calls"]:
            if call["name"] not in available:
                raise _RecordError(
                    f"{TRACE_FIELD} (agent turn {s + 1})",
                    f"tool {call['name']!r} has no definition; give --python-tools or a "
                    "declaration in --tools",
                )
    now = str(_required(record, "current_date_time"))
    overrides = record.get("culture_overrides") or {}
    locations = LocationTokens()
    try:
        goal = _object(locations.rewrite(goal))
        utterances = _object(locations.rewrite(utterances))
    except AliasFileError as exc:
        raise _RecordError("user_goal", str(exc)) from exc
    if locations.names and isinstance(overrides, dict) and overrides:
        overrides = locations.overrides(overrides, places)
    elif locations.names:  # no per-language values: resolve for the import language
        values = {
            f"<LOC_{k}>": spoken_name(n, places, language) for k, n in locations.names.items()
        }
        goal = _object(_replace_all(goal, values))
        utterances = _object(_replace_all(utterances, values))
    unknown = sorted(n for n in locations.names.values() if n not in places)
    if unknown and notes is not None:
        notes.append(
            f"record {record_id}: <LOC:...> names without an alias file (kept as written): "
            + ", ".join(unknown)
        )
    opening = utterances.get(language) or goal.get("starting_utterance") or opening
    initial_db = with_name_aliases(_initial_db(paths, str(record_id), now), places, language)
    agent_definition: JSONObject = {
        "role": agent.role,
        "instructions": agent.instructions,
        "tools": [n for n in agent.tool_names() if n in available],
        "greeting": agent.greeting,
    }
    data = {
        "id": str(record_id),
        "domain": domain,
        "description": str(record.get("expected_flow") or ""),
        "current_date_time": now,
        "user_goal": {**goal, "starting_utterance": goal.get("starting_utterance", opening)},
        "user_persona": persona,
        "persona_traits": _traits(user_config),
        "initial_db": initial_db,
        "expected_db": with_name_aliases(expected, places, language),
        "agent": agent_definition,
        "agent_script": script,
        "culture_overrides": overrides,
        "romanized_culture_overrides": record.get("romanized_culture_overrides") or {},
        "starting_utterances": utterances,
        "language": language,
    }
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        loc = ".".join(str(p) for p in error["loc"])
        raise _RecordError(_record_field(loc), str(error["msg"])) from exc
    try:
        scenario.in_language(language, "record")
    except ConfigError as exc:
        raise _RecordError("culture_overrides", str(exc).removeprefix("record: ")) from exc
    return scenario


def _object(value: JSONValue) -> JSONObject:
    """A rewritten mapping (rewriting keeps a mapping a mapping)."""
    assert isinstance(value, dict)
    return value


def _replace_all(value: JSONValue, values: Mapping[str, str]) -> JSONValue:
    if isinstance(value, str):
        for token, text in values.items():
            value = value.replace(token, text)
        return value
    if isinstance(value, list):
        return [_replace_all(v, values) for v in value]
    if isinstance(value, dict):
        return {k: _replace_all(v, values) for k, v in value.items()}
    return value


def _greeting(path: Path, language: str) -> str:
    """The agent's opening line in ``language`` ("" when the release has none): the trace
    starts with the caller, after this greeting."""
    if not path.exists():
        return ""
    data = load_yaml(path)
    value = data.get(language) if isinstance(data, dict) else None
    return value if isinstance(value, str) else ""


def _required(record: JSONObject, name: str) -> JSONValue:
    if record.get(name) is None:
        raise _RecordError(name, "missing")
    return record[name]


def _traits(user_config: JSONValue) -> dict[str, str]:
    if not isinstance(user_config, dict):
        return {}
    return {k: str(user_config[k]) for k in ("name", "gender") if user_config.get(k) is not None}


def _initial_db(paths: ReleasePaths, record_id: str, now: str) -> JSONObject:
    """The record's initial database file, with ``_current_date`` set to the date part of the
    record's ``current_date_time``: the reference's tool runtime sets it so before every call
    (whatever the file holds), and the released tools read ``db["_current_date"]``."""
    path = paths.scenarios / f"{record_id}.json"
    where = f"{paths.scenarios.name}/{record_id}.json"
    if not path.exists():
        raise _RecordError(where, "initial database file not found")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise _RecordError(where, f"invalid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise _RecordError(where, "expected a JSON object (tables and values)")
    return {**data, CURRENT_DATE_KEY: now.split(" ")[0]}


# scenario field -> the record field it came from, for failure messages
_SOURCES = {
    "persona_traits": "user_config",
    "user_persona": "user_config.user_persona",
    "expected_db": "ground_truth.expected_scenario_db",
    "initial_db": "<domain>_scenarios/<id>.json",
    "agent_script": TRACE_FIELD,
    "description": "expected_flow",
}


def _record_field(loc: str) -> str:
    head, _, rest = loc.partition(".")
    source = _SOURCES.get(head, head)
    return f"{source}.{rest}" if rest else source
