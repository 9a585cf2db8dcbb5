"""Tool declarations (``tools.yaml``): name, description, kind, JSON-schema parameters and the
declarative ``steps`` that run on the scenario database. See docs/live-calls-scenarios.md.

Python hooks (``python: module:function``, as a whole tool or a step) are trusted code: they
are imported when the tools are loaded, and only from modules the user trusts (the run
config's ``trusted_modules``) or from installed voxeval plugins; anything else is refused.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Literal

import jsonschema
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from voxeval.benchmarks.tools.database import describe_value, is_record_table
from voxeval.benchmarks.tools.tool_expr import (
    ExpressionError,
    compile_expression,
    template_expressions,
)
from voxeval.config import format_validation_error, load_yaml
from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject, JSONReadValue, JSONValue

ToolKind = Literal["auth", "read", "write", "system"]
WRITE_OPS = ("insert", "update", "delete")
OPS = (
    "lookup",
    "require",
    "compute",
    "insert",
    "update",
    "delete",
    "set_session",
    "python",
    "return",
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class LookupOp(_Strict):
    table: str
    key: str | None = None  # expression giving the record key
    where: str | None = None  # expression over ``row`` (the candidate record)
    bind: str = Field(alias="as")
    many: bool = False
    required: bool = True
    order_by: str | None = None
    error: str | None = None  # message template when nothing is found

    @model_validator(mode="after")
    def _key_or_where(self) -> LookupOp:
        if (self.key is None) == (self.where is None) and not (self.many and self.where is None):
            raise ValueError("give exactly one of 'key' or 'where' (or many: true for all rows)")
        if self.many and self.key is not None:
            raise ValueError("'many' lookups select with 'where', not 'key'")
        return self


class RequireOp(_Strict):
    check: str
    error: str = "precondition failed"  # message template returned to the agent
    code: str = "precondition_failed"


class InsertOp(_Strict):
    table: str
    key: str  # value template
    record: dict[str, Any]


class UpdateOp(_Strict):
    table: str | None = None
    key: str | None = None  # expression
    target: str | None = None  # a variable bound by ``lookup`` (updates that record)
    set: dict[str, Any]

    @model_validator(mode="after")
    def _where(self) -> UpdateOp:
        if self.target is None and (self.table is None or self.key is None):
            raise ValueError("give 'target' (a looked-up variable) or both 'table' and 'key'")
        return self


class DeleteOp(_Strict):
    table: str | None = None
    key: str | None = None
    target: str | None = None

    @model_validator(mode="after")
    def _where(self) -> DeleteOp:
        if self.target is None and (self.table is None or self.key is None):
            raise ValueError("give 'target' (a looked-up variable) or both 'table' and 'key'")
        return self


class PythonOp(_Strict):
    function: str  # "package.module:function"
    bind: str | None = Field(default=None, alias="as")


class Step(_Strict):
    """One operation; ``when`` (an expression) skips the step when false."""

    when: str | None = None
    op: str
    lookup: LookupOp | None = None
    require: RequireOp | None = None
    compute: dict[str, str] | None = None
    insert: InsertOp | None = None
    update: UpdateOp | None = None
    delete: DeleteOp | None = None
    set_session: dict[str, Any] | None = None
    python: PythonOp | None = None
    return_: Any = Field(default=None, alias="return")

    @model_validator(mode="before")
    @classmethod
    def _one_op(cls, data: JSONReadValue) -> dict[str, JSONReadValue]:
        if not isinstance(data, dict):
            raise ValueError("a step is a mapping with one operation key")
        ops = [k for k in data if k in OPS]
        others = [k for k in data if k not in OPS and k != "when"]
        if len(ops) != 1 or others:
            raise ValueError(
                f"a step needs exactly one of {', '.join(OPS)} (plus optional 'when'); "
                f"got keys {sorted(data)}"
            )
        data = dict(data)
        if ops[0] == "require" and isinstance(data["require"], str):
            data["require"] = {"check": data["require"]}
        if ops[0] == "python" and isinstance(data["python"], str):
            data["python"] = {"function": data["python"]}
        data["op"] = ops[0]
        return data

    def table(self) -> str | None:
        """The table this step reads or writes, when it names one."""
        for op in (self.lookup, self.insert, self.update, self.delete):
            if op is not None and op.table is not None:
                return op.table
        return None


PLUGIN_GROUP = "voxeval.plugins"


def plugin_packages() -> tuple[str, ...]:
    """Top-level packages of the installed voxeval plugins (entry-point group
    ``voxeval.plugins``): installing a plugin means trusting its package."""
    return tuple(sorted({ep.module.split(".")[0] for ep in entry_points(group=PLUGIN_GROUP)}))


def _within(module: str, trusted: str) -> bool:
    return module == trusted or module.startswith(trusted + ".")


@dataclass(frozen=True)
class HookTrust:
    """Where python hooks may come from: ``modules`` (the run config's ``trusted_modules``;
    each entry also covers its submodules) and the packages of installed plugins."""

    modules: tuple[str, ...] = ()

    def allows(self, module: str) -> bool:
        return any(_within(module, t) for t in (*self.modules, *plugin_packages()))

    def resolve(self, ref: str, where: str) -> Callable[..., JSONValue]:
        """Import the hook ``ref`` ("package.module:function") if its module is trusted;
        ``where`` (file, tool and field) starts every error."""
        module_name, _, attr = ref.partition(":")
        if not module_name or not attr:
            raise ConfigError(
                f"{where}: python hook {ref!r} must look like 'package.module:function'"
            )
        if not self.allows(module_name):
            raise ConfigError(
                f"{where}: python hook {ref!r} is refused: module {module_name!r} is not trusted. "
                "Hooks run as Python code with your permissions; name the module in the run "
                f"config's trusted_modules (or `scenarios validate --trust {module_name}`), or "
                "install it as a voxeval plugin"
            )
        try:
            fn = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise ConfigError(f"{where}: python hook {ref!r} cannot be imported: {exc}") from exc
        if not callable(fn):
            raise ConfigError(f"{where}: python hook {ref!r} is not callable")
        defined_in = getattr(fn, "__module__", None)
        if isinstance(defined_in, str) and not self.allows(defined_in):
            raise ConfigError(
                f"{where}: python hook {ref!r} is refused: it is defined in module "
                f"{defined_in!r}, which is not trusted"
            )
        return fn


class ToolSpec(_Strict):
    name: str
    description: str = ""
    kind: ToolKind
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    requires_auth: bool = False  # refuse unless the session is non-empty
    steps: list[Step] = Field(default_factory=list)
    python: str | None = None  # "module:function" implementing the whole tool
    # how the whole-tool hook is called: fn(ctx) ("context"), or fn(params, db, call_index)
    # returning {"status": ...} like EVA-Bench's tools ("eva"; see tools/python_tools.py)
    python_call: Literal["context", "eva"] = "context"
    _hooks: dict[str, Callable[..., JSONValue]] = PrivateAttr(default_factory=dict)

    @field_validator("parameters")
    @classmethod
    def _schema(cls, value: JSONObject) -> JSONObject:
        if value.get("type") != "object":
            raise ValueError("parameters must be a JSON schema with type: object")
        try:
            jsonschema.Draft202012Validator.check_schema(value)
        except jsonschema.SchemaError as exc:
            raise ValueError(f"invalid JSON schema: {exc.message}") from exc
        return value

    @model_validator(mode="after")
    def _consistent(self) -> ToolSpec:
        if not self.steps and not self.python:
            raise ValueError("a tool needs 'steps' or a 'python' hook")
        if self.python_call == "eva" and not self.python:
            raise ValueError("python_call: eva needs a whole-tool 'python' hook")
        if self.kind == "read" and any(s.op in WRITE_OPS for s in self.steps):
            raise ValueError("a read tool may not insert, update or delete")
        for n, step in enumerate(self.steps):
            for expr in _step_expressions(step):
                try:
                    compile_expression(expr)
                except ExpressionError as exc:
                    raise ValueError(f"steps.{n}.{step.op}: {exc}") from exc
        return self

    def hook_refs(self) -> Iterator[tuple[str, str]]:
        """(field path, "module:function") of every python hook of this tool."""
        if self.python:
            yield "python", self.python
        for n, step in enumerate(self.steps):
            if step.python is not None:
                yield f"steps.{n}.python.function", step.python.function

    def bind_hooks(self, trust: HookTrust, where: str) -> None:
        """Import every hook now (refusing untrusted ones), so a call never imports code."""
        for field_path, ref in self.hook_refs():
            self._hooks[ref] = trust.resolve(ref, f"{where}: tool {self.name}: {field_path}")

    def hook(self, ref: str) -> Callable[..., JSONValue]:
        """The function bound for ``ref`` (tools built without ``parse_tool_specs`` resolve
        it now, trusting installed plugins only)."""
        if ref not in self._hooks:
            self._hooks[ref] = HookTrust().resolve(ref, f"tool {self.name}")
        return self._hooks[ref]

    def tables(self) -> Iterator[tuple[str, str]]:
        """(field path, table) of every table this tool's steps name."""
        for n, step in enumerate(self.steps):
            table = step.table()
            if table is not None:
                yield f"steps.{n}.{step.op}.table", table

    def openai_schema(self) -> JSONObject:
        """The Chat Completions ``tools`` entry."""
        return {"type": "function", "function": self.function_schema()}

    def function_schema(self) -> JSONObject:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


def _step_expressions(step: Step) -> list[str]:
    exprs: list[str] = [step.when] if step.when else []
    if step.lookup:
        exprs += [e for e in (step.lookup.key, step.lookup.where) if e]
        exprs += template_expressions(step.lookup.error)
    if step.require:
        exprs += [step.require.check, *template_expressions(step.require.error)]
    if step.compute:
        exprs += list(step.compute.values())
    if step.insert:
        exprs += template_expressions([step.insert.key, step.insert.record])
    if step.update:
        exprs += [step.update.key] if step.update.key else []
        exprs += template_expressions(step.update.set)
    if step.delete and step.delete.key:
        exprs.append(step.delete.key)
    exprs += template_expressions(step.set_session)
    exprs += template_expressions(step.return_)
    return exprs


def parse_tool_specs(
    data: JSONReadValue, where: str, trust: HookTrust | None = None
) -> dict[str, ToolSpec]:
    """``data`` is ``{"tools": [...]}`` or a list of tool mappings. Python hooks are bound
    here and must come from modules ``trust`` allows (default: installed plugins only)."""
    trust = trust or HookTrust()
    items = data.get("tools") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ConfigError(f"{where}: expected a 'tools' list")
    specs: dict[str, ToolSpec] = {}
    for n, item in enumerate(items):
        label = item.get("name", f"#{n}") if isinstance(item, dict) else f"#{n}"
        try:
            spec = ToolSpec.model_validate(item)
        except ValidationError as exc:
            raise ConfigError(format_validation_error(f"{where}: tool {label}", exc)) from exc
        if spec.name in specs:
            raise ConfigError(f"{where}: tool {spec.name!r} is declared twice")
        spec.bind_hooks(trust, where)
        specs[spec.name] = spec
    return specs


def load_tool_specs(path: str | Path, trust: HookTrust | None = None) -> dict[str, ToolSpec]:
    return parse_tool_specs(load_yaml(path), str(path), trust)


def check_tables(
    tools: Mapping[str, ToolSpec],
    tables: Mapping[str, JSONReadValue] | AbstractSet[str],
    where: str,
) -> None:
    """Every table a tool names must be in the scenario's database (``tables``: the entries
    of its initial and expected database, or just their names) and, when the entries are
    given, be a record table rather than a list or a plain value such as ``_current_date``;
    a typo fails at load instead of at the first call."""
    for spec in tools.values():
        for field_path, table in spec.tables():
            if table not in tables:
                known = ", ".join(sorted(tables)) or "none"
                raise ConfigError(
                    f"{where}: tool {spec.name!r}: {field_path}: table {table!r} is not defined "
                    f"in the scenario's database (tables: {known})"
                )
            if isinstance(tables, Mapping) and not is_record_table(tables[table]):
                raise ConfigError(
                    f"{where}: tool {spec.name!r}: {field_path}: {table!r} holds "
                    f"{describe_value(tables[table])}, not records by key; declarative steps "
                    "only work on record tables (use a python hook for other entries)"
                )
