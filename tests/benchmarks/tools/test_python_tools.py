"""Python tools with per-conversation state: EVA-Bench-style functions (params, db,
call_index) run unchanged through ``python_call: eva``, and context hooks see call counts and
a state mapping that lives as long as the conversation."""

from __future__ import annotations

from typing import Any

import pytest

from tests.simulation.helpers import scenario
from voxeval.benchmarks.eva.scenario import Scenario
from voxeval.benchmarks.tools import ToolRuntime, parse_tool_specs
from voxeval.benchmarks.tools.tool_ops import ToolContext
from voxeval.benchmarks.tools.tool_spec import HookTrust
from voxeval.errors import ConfigError

THIS = "tests.benchmarks.tools.test_python_tools"
TRUST = HookTrust((THIS,))


def refund(params: dict[str, Any], db: dict[str, Any], call_index: int) -> dict[str, Any]:
    """A reference-style tool: ids from the call count, writes in place, errors as status."""
    if params["amount"] <= 0:
        db["members"]["KX4"]["visit"] = "should be discarded"
        return {"status": "error", "error_type": "invalid_amount", "message": "amount <= 0"}
    refund_id = f"RF-{call_index:03d}"
    db["members"]["KX4"].setdefault("refunds", []).append(refund_id)
    return {"status": "success", "refund_id": refund_id}


def login(params: dict[str, Any], db: dict[str, Any], call_index: int) -> dict[str, Any]:
    db.setdefault("session", {})["member_id"] = params["member_id"]
    return {"status": "success"}


def crash(params: dict[str, Any], db: dict[str, Any], call_index: int) -> dict[str, Any]:
    raise KeyError("missing_table")


def counting(ctx: ToolContext) -> dict[str, Any]:
    ctx.state["seen"] = [*ctx.state.get("seen", []), ctx.arguments.get("note")]
    if ctx.arguments.get("note") == "fail":
        return {"status": "error", "error": "refused", "message": "no"}
    return {
        "call_index": ctx.call_index,
        "counts": dict(ctx.call_counts),
        "seen": ctx.state["seen"],
    }


def _tools() -> dict[str, Any]:
    number = {"type": "object", "properties": {"amount": {"type": "number"}}}
    text = {"type": "object", "properties": {"note": {"type": "string"}}}
    member = {"type": "object", "properties": {"member_id": {"type": "string"}}}
    return parse_tool_specs(
        [
            {
                "name": "refund",
                "kind": "write",
                "parameters": number,
                "python": f"{THIS}:refund",
                "python_call": "eva",
            },
            {
                "name": "login",
                "kind": "auth",
                "parameters": member,
                "python": f"{THIS}:login",
                "python_call": "eva",
            },
            {"name": "crash", "kind": "read", "python": f"{THIS}:crash", "python_call": "eva"},
            {"name": "note", "kind": "read", "parameters": text, "python": f"{THIS}:counting"},
        ],
        "tools.yaml",
        TRUST,
    )


def _runtime() -> ToolRuntime:
    data = scenario()
    data["agent"]["tools"] = []
    return ToolRuntime(Scenario.model_validate(data), _tools(), TRUST)


def test_eva_function_ids_follow_the_per_conversation_call_count() -> None:
    runtime = _runtime()
    first = runtime.call("refund", {"amount": 5.0})
    refused = runtime.call("refund", {"amount": 0})  # counts, as in the reference
    third = runtime.call("refund", {"amount": 2.5})
    assert first.result == {"status": "success", "refund_id": "RF-001"}
    assert refused.error == "amount <= 0" and refused.result["error"] == "invalid_amount"
    assert third.result["refund_id"] == "RF-003"
    member = runtime.db["members"]["KX4"]
    assert member["refunds"] == ["RF-001", "RF-003"]
    assert member["visit"] is None  # the refused call's write was discarded
    assert _runtime().call("refund", {"amount": 1}).result["refund_id"] == "RF-001"  # new call


def test_eva_function_session_lives_in_db_session_and_persists() -> None:
    runtime = _runtime()
    runtime.call("login", {"member_id": "KX4"})
    runtime.call("refund", {"amount": 1})  # a later tool that ignores the session keeps it
    assert runtime.session == {"member_id": "KX4"}
    final = runtime.final_state()
    assert final["session"] == {"member_id": "KX4"} and "session" not in runtime.db


def test_eva_function_exception_is_returned_as_execution_error() -> None:
    record = _runtime().call("crash", {})
    assert record.valid and record.result["error"] == "execution_error"
    assert "KeyError" in (record.error or "")


def test_context_hooks_see_call_counts_and_conversation_state() -> None:
    runtime = _runtime()
    runtime.call("refund", {"amount": 1})
    first = runtime.call("note", {"note": "a"})
    runtime.call("note", {"note": "fail"})  # a refused call leaves the state as it was
    third = runtime.call("note", {"note": "b"})
    assert first.result == {"call_index": 1, "counts": {"refund": 1, "note": 1}, "seen": ["a"]}
    assert third.result["call_index"] == 3 and third.result["seen"] == ["a", "b"]


def test_python_call_eva_needs_a_whole_tool_hook() -> None:
    with pytest.raises(ConfigError, match="python_call: eva needs a whole-tool 'python' hook"):
        parse_tool_specs(
            [{"name": "x", "kind": "read", "steps": [{"return": 1}], "python_call": "eva"}],
            "tools.yaml",
        )
