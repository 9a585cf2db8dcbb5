"""Executes a declarative tool's steps on a working copy of the scenario database."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field

from voxeval.benchmarks.tools.database import Database, RecordTable, describe_value, is_record_table
from voxeval.benchmarks.tools.python_tools import call_eva_function
from voxeval.benchmarks.tools.tool_expr import ExpressionError, evaluate, render
from voxeval.benchmarks.tools.tool_spec import (
    DeleteOp,
    InsertOp,
    LookupOp,
    PythonOp,
    Step,
    ToolSpec,
    UpdateOp,
)
from voxeval.json_types import JSONObject, JSONValue


class ToolFailure(Exception):
    """A tool refused the request (not found, failed precondition); returned to the agent."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class ToolContext:
    """What a tool sees: the working database and session, its parameters and bound variables.
    Python hooks receive this object and may read or change ``db``/``session``/``vars``."""

    db: Database
    session: JSONObject
    params: JSONObject
    now: str
    vars: JSONObject = field(default_factory=dict)
    # variable -> (table, key) of a record bound by a single-record lookup
    bound: dict[str, tuple[str, str]] = field(default_factory=dict)
    # per-conversation state for python hooks: the arguments as the agent sent them (``params``
    # adds defaults), this tool's call number in the conversation (1 = first), calls per tool
    # so far, and a mapping kept across calls (like ``db``, changed only by successful calls)
    arguments: JSONObject = field(default_factory=dict)
    call_index: int = 1
    call_counts: dict[str, int] = field(default_factory=dict)
    state: JSONObject = field(default_factory=dict)

    def scope(self) -> dict[str, JSONValue]:
        return {
            **self.params,
            **self.vars,
            "params": self.params,
            "session": self.session,
            "now": self.now,
            "db": self.db,
        }

    def table(self, name: str, create: bool = False) -> RecordTable:
        """The record table ``name`` (made empty first when ``create`` and it is absent);
        a list or plain value under that name is a tool error naming it, never a crash."""
        if name not in self.db:
            if not create:
                raise ToolFailure("tool_error", f"table {name!r} does not exist")
            self.db[name] = {}
        table = self.db[name]
        if not is_record_table(table):
            raise ToolFailure(
                "tool_error",
                f"{name!r} holds {describe_value(table)}, not a table of records by key",
            )
        return table


class _NoResult(enum.Enum):
    """A step that produced no result (None is a result a tool can return)."""

    NO_RESULT = "no result"


_NO_RESULT = _NoResult.NO_RESULT


def run_tool(spec: ToolSpec, ctx: ToolContext) -> JSONValue:
    """Run ``spec`` and return its result; raise ToolFailure for refusals/errors."""
    if spec.python:
        hook = spec.hook(spec.python)
        return call_eva_function(hook, ctx) if spec.python_call == "eva" else hook(ctx)
    for step in spec.steps:
        try:
            if step.when and not evaluate(step.when, ctx.scope()):
                continue
            result = _run_step(step, ctx, spec)
        except ExpressionError as exc:
            raise ToolFailure("tool_error", f"{spec.name}: {step.op}: {exc}") from exc
        if result is not _NO_RESULT:
            return result
    return {"status": "ok"}


def _run_step(step: Step, ctx: ToolContext, spec: ToolSpec) -> JSONValue | _NoResult:
    if step.lookup is not None:
        _lookup(step.lookup, ctx)
    elif step.require is not None:
        if not evaluate(step.require.check, ctx.scope()):
            raise ToolFailure(step.require.code, str(render(step.require.error, ctx.scope())))
    elif step.compute is not None:
        for name, expr in step.compute.items():
            ctx.vars[name] = evaluate(expr, ctx.scope())
    elif step.insert is not None:
        _insert(step.insert, ctx)
    elif step.update is not None:
        _update(step.update, ctx)
    elif step.delete is not None:
        _delete(step.delete, ctx)
    elif step.set_session is not None:
        ctx.session.update(_render_record(step.set_session, ctx.scope()))
    elif step.python is not None:
        _python(step.python, ctx, spec.hook(step.python.function))
    elif step.op == "return":
        return render(step.return_, ctx.scope())
    return _NO_RESULT


def _lookup(op: LookupOp, ctx: ToolContext) -> None:
    table = ctx.table(op.table)
    scope = ctx.scope()
    if op.key is not None:
        key = str(evaluate(op.key, scope))
        found = [(key, table[key])] if key in table else []
    else:
        found = [
            (k, row) for k, row in table.items() if op.where is None or _where(op.where, scope, row)
        ]
    order_by = op.order_by
    if order_by:
        found.sort(key=lambda kv: (kv[1].get(order_by) is None, str(kv[1].get(order_by))))
    if op.many:
        rows: list[JSONValue] = [row for _, row in found]
        ctx.vars[op.bind] = rows
        return
    if not found:
        if op.required:
            default = f"no matching record in {op.table}"
            raise ToolFailure("not_found", str(render(op.error or default, scope)))
        ctx.vars[op.bind] = None
        ctx.vars[op.bind + "_key"] = None
        return
    key, row = found[0]
    ctx.vars[op.bind] = row
    ctx.vars[op.bind + "_key"] = key
    ctx.bound[op.bind] = (op.table, key)


def _where(expr: str, scope: dict[str, JSONValue], row: JSONObject) -> bool:
    return bool(evaluate(expr, {**scope, "row": row}))


def _render_record(template: JSONObject, scope: dict[str, JSONValue]) -> JSONObject:
    """A record template rendered: a mapping template always renders to a mapping."""
    rendered = render(template, scope)
    assert isinstance(rendered, dict)
    return rendered


def _locate(
    table: str | None, key: str | None, target: str | None, ctx: ToolContext
) -> tuple[str, str]:
    if target is not None:
        if target not in ctx.bound:
            raise ToolFailure("tool_error", f"{target!r} is not a record bound by a lookup")
        return ctx.bound[target]
    assert table is not None and key is not None
    return table, str(evaluate(key, ctx.scope()))


def _insert(op: InsertOp, ctx: ToolContext) -> None:
    table = ctx.table(op.table, create=True)
    scope = ctx.scope()
    key = str(render(op.key, scope))
    if key in table:
        raise ToolFailure("conflict", f"{op.table} already has a record {key!r}")
    table[key] = _render_record(op.record, scope)


def _update(op: UpdateOp, ctx: ToolContext) -> None:
    table_name, key = _locate(op.table, op.key, op.target, ctx)
    table = ctx.table(table_name)
    if key not in table:
        raise ToolFailure("not_found", f"no record {key!r} in {table_name}")
    table[key].update(_render_record(op.set, ctx.scope()))


def _delete(op: DeleteOp, ctx: ToolContext) -> None:
    table_name, key = _locate(op.table, op.key, op.target, ctx)
    table = ctx.table(table_name)
    if key not in table:
        raise ToolFailure("not_found", f"no record {key!r} in {table_name}")
    del table[key]


def _python(op: PythonOp, ctx: ToolContext, hook: Callable[..., JSONValue]) -> None:
    result = hook(ctx)
    if isinstance(result, dict) and result.get("status") == "error":
        raise ToolFailure(str(result.get("error", "hook_error")), str(result.get("message", "")))
    if op.bind:
        ctx.vars[op.bind] = result
