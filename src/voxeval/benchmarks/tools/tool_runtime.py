"""The scenario database plus the agent's tools: validates, executes and logs every call."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Protocol

import jsonschema

from voxeval.benchmarks.tools.argument_coercion import STRICT, ToolArguments, coerce_arguments
from voxeval.benchmarks.tools.database import Database
from voxeval.benchmarks.tools.tool_call import ToolCallRecord
from voxeval.benchmarks.tools.tool_ops import ToolContext, ToolFailure, run_tool
from voxeval.benchmarks.tools.tool_spec import HookTrust, ToolSpec, parse_tool_specs
from voxeval.errors import ConfigError
from voxeval.json_types import JSONArray, JSONObject, JSONValue


class ToolAgent(Protocol):
    @property
    def tools(self) -> Sequence[str | JSONObject]: ...


class ToolScenario(Protocol):
    """What the tool runtime reads of a scenario (``voxeval.benchmarks.eva.scenario.Scenario``):
    a structural type, so the scenario model can build its tools without an import cycle."""

    @property
    def id(self) -> str: ...

    @property
    def agent(self) -> ToolAgent: ...

    @property
    def initial_db(self) -> Database: ...

    @property
    def current_date_time(self) -> str: ...


def resolve_scenario_tools(
    scenario: ToolScenario,
    tool_specs: Mapping[str, ToolSpec] | Sequence[ToolSpec],
    trust: HookTrust | None = None,
) -> dict[str, ToolSpec]:
    """The tools the scenario's agent may use: named ones from ``tool_specs`` plus inline
    declarations (whose python hooks must be allowed by ``trust``); when the agent lists no
    tools, all of ``tool_specs``."""
    library = (
        dict(tool_specs) if isinstance(tool_specs, Mapping) else {t.name: t for t in tool_specs}
    )
    if not scenario.agent.tools:
        return library
    chosen: dict[str, ToolSpec] = {}
    for n, entry in enumerate(scenario.agent.tools):
        if isinstance(entry, str):
            if entry not in library:
                known = ", ".join(sorted(library)) or "none"
                raise ConfigError(
                    f"scenario {scenario.id}: agent.tools.{n}: unknown tool {entry!r}; "
                    f"known: {known}"
                )
            chosen[entry] = library[entry]
        else:
            where = f"scenario {scenario.id}: agent.tools.{n}"
            chosen.update(parse_tool_specs([entry], where, trust))
    return chosen


class ToolRuntime:
    """``db`` and ``session`` hold the live state; ``log`` every executed call in order.

    Each call runs on a deep copy of the database and session and is committed only if it
    succeeds, so a refused call never leaves partial writes behind.

    ``arguments`` is the suite's ``tool_arguments`` setting: ``strict`` refuses a call whose
    arguments do not match the tool's schema; ``coerce`` (the EVA-Bench reference's behaviour,
    the default of imported suites) converts a mismatched type when nothing is lost, runs the
    call and records the mismatch on it (``ToolCallRecord.argument_mismatches``). Tools in the
    reference's calling convention (``python_call: eva``) receive the arguments as sent, as the
    reference passes them; other tools receive the converted values."""

    def __init__(
        self,
        scenario: ToolScenario,
        tool_specs: Mapping[str, ToolSpec] | Sequence[ToolSpec],
        trust: HookTrust | None = None,
        arguments: ToolArguments = STRICT,
    ) -> None:
        self.scenario = scenario
        self.arguments = arguments
        self.tools = resolve_scenario_tools(scenario, tool_specs, trust)
        self.db: Database = copy.deepcopy(scenario.initial_db)
        self.session: JSONObject = {}
        self.log: list[ToolCallRecord] = []
        # per-conversation state for python tools: calls per tool name (every call counts,
        # refused ones too, as in the reference) and a free-form mapping (ToolContext.state)
        self.call_counts: dict[str, int] = {}
        self.state: JSONObject = {}
        self._validators = {
            name: jsonschema.Draft202012Validator(spec.parameters)
            for name, spec in self.tools.items()
        }

    def tool_schemas(self) -> list[JSONObject]:
        """OpenAI ``tools=[...]`` entries."""
        return [spec.openai_schema() for spec in self.tools.values()]

    def realtime_tool_schemas(self) -> JSONArray:
        """Realtime API ``session.tools`` entries (the function's fields beside ``type``)."""
        return [{"type": "function", **spec.function_schema()} for spec in self.tools.values()]

    def kind_of(self, name: str) -> str:
        spec = self.tools.get(name)
        return spec.kind if spec else ""

    def call(self, name: str, arguments: Mapping[str, JSONValue] | str | None) -> ToolCallRecord:
        record = self._execute(name, arguments)
        self.log.append(record)
        return record

    def final_state(self) -> Database:
        """The database with the auth ``session`` (the shape of ``expected_db``)."""
        return {**copy.deepcopy(self.db), "session": dict(self.session)}

    def _execute(
        self, name: str, arguments: Mapping[str, JSONValue] | str | None
    ) -> ToolCallRecord:
        self.call_counts[name] = self.call_counts.get(name, 0) + 1
        spec = self.tools.get(name)
        args, parse_error = _parse_arguments(arguments)
        if spec is None:
            known = ", ".join(sorted(self.tools))
            return _refusal(
                name, args, "", "unknown_tool", f"unknown tool {name!r}; known: {known}"
            )
        if parse_error is not None:
            return _refusal(name, args, spec.kind, "invalid_parameters", parse_error)
        given = _without_null_optionals(args, spec.parameters)
        mismatches: tuple[str, ...] = ()
        if self.arguments != STRICT:
            given, notes = coerce_arguments(given, spec.parameters)
            mismatches = tuple(notes)
        problems = sorted(self._validators[name].iter_errors(given), key=lambda e: list(e.path))
        if problems:
            message = "; ".join(_schema_message(e) for e in problems)
            refused = _refusal(name, args, spec.kind, "invalid_parameters", message)
            return replace(refused, argument_mismatches=mismatches)
        if spec.requires_auth and not self.session:
            return ToolCallRecord(
                name=name,
                arguments=args,
                result=_error("not_authenticated", "the caller has not been verified yet"),
                kind=spec.kind,
                valid=True,
                error="the caller has not been verified yet",
                argument_mismatches=mismatches,
            )
        ctx = ToolContext(
            db=copy.deepcopy(self.db),
            session=dict(self.session),
            params=_with_defaults(given, spec.parameters),
            now=self.scenario.current_date_time,
            arguments=copy.deepcopy(args),
            call_index=self.call_counts[name],
            call_counts=dict(self.call_counts),
            state=copy.deepcopy(self.state),
        )
        try:
            result = run_tool(spec, ctx)
            if isinstance(result, dict) and result.get("status") == "error":
                raise ToolFailure(str(result.get("error", "error")), str(result.get("message", "")))
        except ToolFailure as exc:
            return ToolCallRecord(
                name=name,
                arguments=args,
                result=_error(exc.code, exc.message),
                kind=spec.kind,
                valid=True,
                error=exc.message,
                argument_mismatches=mismatches,
            )
        self.db, self.session, self.state = ctx.db, ctx.session, ctx.state
        return ToolCallRecord(
            name=name,
            arguments=args,
            result=copy.deepcopy(result),
            kind=spec.kind,
            valid=True,
            argument_mismatches=mismatches,
        )


def _parse_arguments(
    arguments: Mapping[str, JSONValue] | str | None,
) -> tuple[JSONObject, str | None]:
    if arguments is None or arguments == "":
        return {}, None
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except json.JSONDecodeError as exc:
            return {"_raw": arguments}, f"arguments are not valid JSON ({exc.msg})"
        if not isinstance(parsed, dict):
            return {"_raw": arguments}, "arguments must be a JSON object"
        return parsed, None
    return dict(arguments), None


def _without_null_optionals(args: JSONObject, schema: JSONObject) -> JSONObject:
    """``args`` without optional parameters sent as null: agents send ``"flight_number": null``
    for "not given", which the EVA-Bench tools accept (their optional fields default to None)
    and a JSON schema of ``type: string`` would refuse."""
    names = schema.get("required")
    required = set(names) if isinstance(names, list) else set()
    return {k: v for k, v in args.items() if v is not None or k in required}


def _with_defaults(args: JSONObject, schema: JSONObject) -> JSONObject:
    """Optional parameters the agent left out are present as their default (or None), so tool
    expressions can test them."""
    filled = dict(args)
    properties = schema.get("properties")
    for prop, prop_schema in (properties if isinstance(properties, dict) else {}).items():
        if prop not in filled:
            filled[prop] = prop_schema.get("default") if isinstance(prop_schema, dict) else None
    return filled


def _schema_message(error: jsonschema.ValidationError) -> str:
    where = ".".join(str(p) for p in error.path)
    return f"{where}: {error.message}" if where else error.message


def _error(code: str, message: str) -> JSONObject:
    return {"status": "error", "error": code, "message": message}


def _refusal(name: str, args: JSONObject, kind: str, code: str, message: str) -> ToolCallRecord:
    return ToolCallRecord(
        name=name,
        arguments=args,
        result=_error(code, message),
        kind=kind,
        valid=False,
        error=message,
    )
