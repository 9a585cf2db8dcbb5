"""Tool declarations (``tools.yaml``): name, description, kind, JSON-schema parameters and the
declarative ``steps`` that run on the scenario database. See docs/live-calls-scenarios.md."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import jsonschema
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from voxeval.config import format_validation_error, load_yaml
from voxeval.errors import ConfigError
from voxeval.simulation.tool_expr import ExpressionError, compile_expression, template_expressions

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
    def _one_op(cls, data: Any) -> Any:
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


class ToolSpec(_Strict):
    name: str
    description: str = ""
    kind: ToolKind
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    requires_auth: bool = False  # refuse unless the session is non-empty
    steps: list[Step] = Field(default_factory=list)
    python: str | None = None  # "module:function" implementing the whole tool

    @field_validator("parameters")
    @classmethod
    def _schema(cls, value: dict[str, Any]) -> dict[str, Any]:
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
        if self.kind == "read" and any(s.op in WRITE_OPS for s in self.steps):
            raise ValueError("a read tool may not insert, update or delete")
        for n, step in enumerate(self.steps):
            for expr in _step_expressions(step):
                try:
                    compile_expression(expr)
                except ExpressionError as exc:
                    raise ValueError(f"steps.{n}.{step.op}: {exc}") from exc
        return self

    def openai_schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


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


def resolve_hook(ref: str) -> Callable[..., Any]:
    """Import ``"package.module:function"``."""
    module_name, _, attr = ref.partition(":")
    if not module_name or not attr:
        raise ConfigError(f"python hook {ref!r} must look like 'package.module:function'")
    try:
        fn = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"python hook {ref!r} cannot be imported: {exc}") from exc
    if not callable(fn):
        raise ConfigError(f"python hook {ref!r} is not callable")
    return fn


def parse_tool_specs(data: Any, where: str) -> dict[str, ToolSpec]:
    """``data`` is ``{"tools": [...]}`` or a list of tool mappings."""
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
        specs[spec.name] = spec
    return specs


def load_tool_specs(path: str | Path) -> dict[str, ToolSpec]:
    return parse_tool_specs(load_yaml(path), str(path))
