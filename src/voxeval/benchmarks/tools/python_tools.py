"""Python tool functions written in the EVA-Bench convention, run unchanged.

Such a function is called as ``fn(params=..., db=..., call_index=...)``: ``params`` are the
arguments as the agent sent them, ``db`` is the whole scenario database as one mapping which
the function reads and changes in place (authentication goes under ``db["session"]``), and
``call_index`` counts this tool's calls in the conversation (1 for the first), which is how
such tools generate IDs (a refund id ending ``-001``). It returns a mapping with ``status``
(``"success"`` or ``"error"``; an error carries ``error_type`` and ``message``). A tool spec
selects this convention with ``python_call: eva``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from voxeval.json_types import JSONObject, JSONValue

SESSION_KEY = "session"


class EvaCallContext(Protocol):
    """The parts of ``tool_ops.ToolContext`` this adapter uses."""

    db: dict[str, JSONValue]
    session: JSONObject
    arguments: JSONObject
    call_index: int


def call_eva_function(fn: Callable[..., JSONValue], ctx: EvaCallContext) -> JSONValue:
    """Run ``fn`` on the context's working database and session. Its result is returned in the
    runtime's form: an error becomes ``{"status": "error", "error": CODE, "message": ...}``
    (the runtime then refuses the call and discards its writes). An exception is handed back
    the same way as ``execution_error``, as the reference hands it to the agent."""
    db = ctx.db
    if ctx.session:
        db[SESSION_KEY] = dict(ctx.session)
    try:
        result = fn(params=dict(ctx.arguments), db=db, call_index=ctx.call_index)
    except Exception as exc:  # the reference returns these to the agent as execution errors
        return _error("execution_error", f"{type(exc).__name__}: {exc}")
    session = db.pop(SESSION_KEY, None)
    ctx.session.clear()
    if isinstance(session, dict):
        ctx.session.update(session)
    if not isinstance(result, dict) or "status" not in result:
        return _error("malformed_result", f"the tool returned no 'status' field: {result!r}")
    if result.get("status") == "error":
        code = result.get("error_type") or result.get("error") or "error"
        return {**result, "error": str(code), "message": str(result.get("message", ""))}
    return result


def _error(code: str, message: str) -> JSONObject:
    return {"status": "error", "error": code, "message": message}
