"""Declarative tools: the safe expression language, every step type, validation, atomicity."""

from __future__ import annotations

from typing import Any

import pytest

from voxeval.benchmarks.eva.scenario import Scenario
from voxeval.benchmarks.tools import ToolRuntime, parse_tool_specs
from voxeval.benchmarks.tools.tool_expr import ExpressionError, evaluate, render
from voxeval.benchmarks.tools.tool_ops import ToolContext
from voxeval.benchmarks.tools.tool_spec import HookTrust
from voxeval.errors import ConfigError

TRUST_THIS_MODULE = HookTrust(("tests.benchmarks.tools.test_tools",))

TOOLS_YAML: dict[str, Any] = {
    "tools": [
        {
            "name": "login",
            "kind": "auth",
            "parameters": {
                "type": "object",
                "properties": {"account": {"type": "string"}, "pin": {"type": "string"}},
                "required": ["account", "pin"],
            },
            "steps": [
                {
                    "lookup": {
                        "table": "accounts",
                        "where": "norm(row.id) == norm(account)",
                        "as": "acct",
                    }
                },
                {
                    "require": {
                        "check": "acct.pin == pin",
                        "code": "bad_pin",
                        "error": "PIN wrong for ${account}",
                    }
                },
                {"set_session": {"account": "${acct.id}"}},
                {"return": {"status": "ok", "owner": "${acct.owner}"}},
            ],
        },
        {
            "name": "late_fee",
            "kind": "write",
            "requires_auth": True,
            "parameters": {
                "type": "object",
                "properties": {
                    "days_late": {"type": "integer", "minimum": 0},
                    "note": {"type": "string"},
                },
                "required": ["days_late"],
            },
            "steps": [
                {"lookup": {"table": "accounts", "key": "session.account", "as": "acct"}},
                {"compute": {"fee": "round(acct.base_fee * 1.5 * days_late, 2)"}},
                {"update": {"target": "acct", "set": {"balance": "${acct.balance + fee}"}}},
                {
                    "when": "note is not None",
                    "insert": {
                        "table": "notes",
                        "key": "N-${days_late}",
                        "record": {"text": "${note}"},
                    },
                },
                {"require": {"check": "fee < 100", "error": "fee ${fee} too high"}},
                {"return": {"fee": "${fee}", "summary": "fee of ${fee} for ${days_late} days"}},
            ],
        },
        {
            "name": "close",
            "kind": "write",
            "parameters": {
                "type": "object",
                "properties": {"id": {"type": "string"}},
                "required": ["id"],
            },
            "steps": [{"delete": {"table": "accounts", "key": "id"}}],
        },
        {
            "name": "hooked",
            "kind": "read",
            "parameters": {"type": "object", "properties": {}},
            "python": "tests.benchmarks.tools.test_tools:count_accounts",
        },
        {
            "name": "step_hook",
            "kind": "system",
            "parameters": {"type": "object", "properties": {}},
            "steps": [
                {
                    "python": {
                        "function": "tests.benchmarks.tools.test_tools:count_accounts",
                        "as": "n",
                    }
                },
                {"return": "${n.count * 10}"},
            ],
        },
    ]
}


def count_accounts(ctx: ToolContext) -> dict[str, Any]:
    return {"count": len(ctx.db["accounts"])}


def scenario() -> Scenario:
    return Scenario.model_validate(
        {
            "id": "t1",
            "current_date_time": "2026-03-16 10:15",
            "user_goal": {"high_level_user_goal": "g", "starting_utterance": "hi"},
            "user_persona": "p",
            "initial_db": {
                "accounts": {
                    "AB-12": {
                        "id": "AB-12",
                        "pin": "4321",
                        "owner": "Ana",
                        "base_fee": 10.0,
                        "balance": 5,
                    },
                    "CD-34": {
                        "id": "CD-34",
                        "pin": "1111",
                        "owner": "Bo",
                        "base_fee": 20,
                        "balance": 0,
                    },
                },
                "notes": {},
            },
            "expected_db": {},
            "agent": {"role": "r", "instructions": "i"},
        }
    )


@pytest.fixture
def runtime() -> ToolRuntime:
    return ToolRuntime(scenario(), parse_tool_specs(TOOLS_YAML, "test", TRUST_THIS_MODULE))


def test_expression_language_basics() -> None:
    scope = {"a": {"fee": 12.5, "items": [1, 2, 3]}, "n": 2, "s": "Kx4-92b7"}
    assert evaluate("a.fee * n + 1", scope) == 26.0
    assert evaluate("len(a.items) if n > 1 else 0", scope) == 3
    assert evaluate("norm(s)", scope) == "KX492B7"
    assert evaluate("2 in a.items and not (n == 3)", scope) is True
    assert evaluate("add_days('2026-03-16', 3)", scope) == "2026-03-19"
    assert evaluate("hours_between('2026-03-16 10:15', '2026-03-17 09:00')", scope) == 22.75
    assert evaluate("days_between('2026-03-02', '2026-03-16 10:15 PST')", scope) == 14
    assert evaluate("code(6, 'x', 1)", scope) == evaluate("code(6, 'x', 1)", {})
    assert render("${n}", scope) == 2
    assert render("n=${n}, fee=${a.fee}", scope) == "n=2, fee=12.5"
    assert render({"x": ["${n * 2}", "plain"]}, scope) == {"x": [4, "plain"]}


@pytest.mark.parametrize(
    "source",
    [
        "__import__('os')",
        "a.__class__",
        "open('/etc/passwd')",
        "(lambda: 1)()",
        "[x for x in a]",
        "s.upper()",
        "a.fee; 1",
        "'x' * 100000000",
    ],
)
def test_unsafe_expressions_are_rejected(source: str) -> None:
    with pytest.raises(ExpressionError):
        evaluate(source, {"a": {"fee": 1}, "s": "x"})


def test_unknown_names_and_fields_are_reported() -> None:
    with pytest.raises(ExpressionError, match="unknown name 'missing'"):
        evaluate("missing + 1", {"a": 1})
    with pytest.raises(ExpressionError, match="no field 'nope'"):
        evaluate("a.nope", {"a": {}})


def test_auth_lookup_require_and_session(runtime: ToolRuntime) -> None:
    schemas = runtime.tool_schemas()
    assert schemas[0]["type"] == "function" and schemas[0]["function"]["name"] == "login"
    bad = runtime.call("login", {"account": "ab 12", "pin": "0000"})
    assert bad.valid and bad.error == "PIN wrong for ab 12"
    assert bad.result == {"status": "error", "error": "bad_pin", "message": "PIN wrong for ab 12"}
    assert runtime.session == {}
    ok = runtime.call("login", '{"account": "ab-12", "pin": "4321"}')
    assert ok.result == {"status": "ok", "owner": "Ana"} and ok.kind == "auth"
    assert runtime.session == {"account": "AB-12"}
    missing = runtime.call("login", {"account": "ZZ-99", "pin": "1"})
    assert missing.result["error"] == "not_found"
    assert [r.name for r in runtime.log] == ["login", "login", "login"]


def test_compute_update_insert_and_final_state(runtime: ToolRuntime) -> None:
    refused = runtime.call("late_fee", {"days_late": 2})
    assert refused.error == "the caller has not been verified yet"
    runtime.call("login", {"account": "AB-12", "pin": "4321"})
    record = runtime.call("late_fee", {"days_late": 2, "note": "called in"})
    assert record.error is None
    assert record.result == {"fee": 30.0, "summary": "fee of 30 for 2 days"}
    assert runtime.db["accounts"]["AB-12"]["balance"] == 35.0
    assert runtime.db["notes"] == {"N-2": {"text": "called in"}}
    state = runtime.final_state()
    assert state["session"] == {"account": "AB-12"}
    state["accounts"]["AB-12"]["balance"] = -1  # a copy: the runtime is untouched
    assert runtime.db["accounts"]["AB-12"]["balance"] == 35.0


def test_failed_call_leaves_no_partial_writes(runtime: ToolRuntime) -> None:
    runtime.call("login", {"account": "AB-12", "pin": "4321"})
    record = runtime.call(
        "late_fee", {"days_late": 7, "note": "x"}
    )  # fee 105 fails the last require
    assert record.error == "fee 105 too high"
    assert runtime.db["accounts"]["AB-12"]["balance"] == 5
    assert runtime.db["notes"] == {}


def test_schema_validation_and_unknown_tools(runtime: ToolRuntime) -> None:
    invalid = runtime.call("late_fee", {"days_late": -1})
    assert invalid.valid is False and "days_late" in (invalid.error or "")
    missing = runtime.call("login", {"account": "AB-12"})
    assert missing.valid is False and "'pin' is a required property" in (missing.error or "")
    not_json = runtime.call("login", "{oops")
    assert not_json.valid is False and "not valid JSON" in (not_json.error or "")
    unknown = runtime.call("transfer_money", {})
    assert unknown.valid is False and "unknown tool" in (unknown.error or "")
    assert len(runtime.log) == 4


def test_delete_and_python_hooks(runtime: ToolRuntime) -> None:
    assert runtime.call("hooked", {}).result == {"count": 2}
    assert runtime.call("close", {"id": "CD-34"}).error is None
    assert list(runtime.db["accounts"]) == ["AB-12"]
    assert runtime.call("step_hook", {}).result == 10
    assert runtime.call("close", {"id": "CD-34"}).result["error"] == "not_found"


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        ({"name": "x", "kind": "read", "steps": [{"delete": {"table": "t", "key": "k"}}]},
         "read tool may not"),
        ({"name": "x", "kind": "write", "steps": [{"compute": {"a": "__import__('os')"}}]},
         "steps.0.compute"),
        ({"name": "x", "kind": "write",
          "steps": [{"lookup": {"table": "t", "as": "v"}, "insert": {}}]}, "exactly one of"),
        ({"name": "x", "kind": "magic", "steps": [{"return": 1}]}, "kind"),
        ({"name": "x", "kind": "read", "parameters": {"type": "string"}, "steps": [{"return": 1}]},
         "type: object"),
        ({"name": "x", "kind": "read"}, "needs 'steps'"),
    ],
)  # fmt: skip
def test_bad_tool_definitions_name_the_tool_and_field(tool: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match="tool x") as err:
        parse_tool_specs({"tools": [tool]}, "tools.yaml")
    assert message in str(err.value)
    assert "tools.yaml" in str(err.value)


def _hook_tool(ref: str) -> dict[str, Any]:
    return {"name": "h", "kind": "system", "python": ref}


@pytest.mark.parametrize(
    "ref",
    [
        "os:system",
        "subprocess:run",
        "builtins:eval",
        "tests.benchmarks.tools.test_tools:count_accounts",
    ],
)
def test_untrusted_python_hooks_are_refused_at_load(ref: str) -> None:
    with pytest.raises(ConfigError, match="is not trusted") as err:
        parse_tool_specs({"tools": [_hook_tool(ref)]}, "tools.yaml")
    message = str(err.value)
    assert "tools.yaml: tool h: python" in message and ref in message
    assert "trusted_modules" in message


def test_step_hooks_are_checked_too_and_name_their_step() -> None:
    tool = {"name": "s", "kind": "system",
            "steps": [{"return": 1}, {"python": {"function": "os:getcwd", "as": "x"}}]}  # fmt: skip
    with pytest.raises(ConfigError, match=r"tool s: steps\.1\.python\.function"):
        parse_tool_specs({"tools": [tool]}, "tools.yaml")


def test_trusted_module_covers_submodules_but_not_reexported_functions() -> None:
    trust = HookTrust(("tests.benchmarks",))
    hook = "tests.benchmarks.tools.test_tools:count_accounts"
    specs = parse_tool_specs({"tools": [_hook_tool(hook)]}, "tools.yaml", trust)
    assert specs["h"].hook(hook) is count_accounts
    # a function imported into a trusted module from an untrusted one is still refused
    with pytest.raises(ConfigError, match="defined in module"):
        parse_tool_specs({"tools": [_hook_tool("tests.benchmarks.tools.test_tools:evaluate")]},
                         "tools.yaml", trust)  # fmt: skip
    assert not HookTrust(("tests.bench",)).allows("tests.benchmarks")


def test_a_tool_built_without_parsing_trusts_nothing_but_plugins(runtime: ToolRuntime) -> None:
    from voxeval.benchmarks.tools.tool_spec import ToolSpec

    spec = ToolSpec.model_validate(_hook_tool("os:getcwd"))
    with pytest.raises(ConfigError, match="not trusted"):
        spec.hook("os:getcwd")


@pytest.mark.parametrize("source", ["b'x'", "1j", "..."])
def test_constants_that_are_not_json_values_are_rejected(source: str) -> None:
    # expressions produce JSON data; a bytes, complex or Ellipsis literal has no JSON form
    with pytest.raises(ExpressionError, match="is not a JSON value"):
        evaluate(source, {})


def test_dict_literals_and_get_keep_python_semantics() -> None:
    assert evaluate("get({1: 'one'}, 1)", {}) == "one"
    assert evaluate("get(a, 'x', 5)", {"a": {"y": 1}}) == 5
    assert evaluate("get(a, -1)", {"a": [1, 2]}) == 2
    assert evaluate("-n + +n - -1", {"n": 3}) == 1
    with pytest.raises(ExpressionError, match="TypeError: unhashable type: 'list'"):
        evaluate("{[1]: 2}", {})
    with pytest.raises(ExpressionError, match="TypeError: unhashable type: 'list'"):
        evaluate("get(a, [1])", {"a": {"y": 1}})


def test_realtime_tool_schemas_flatten_the_function(runtime: ToolRuntime) -> None:
    flat = runtime.realtime_tool_schemas()
    nested = runtime.tool_schemas()
    assert list(flat[0]) == ["type", "name", "description", "parameters"]
    functions = [n["function"] for n in nested]
    assert flat == [{"type": "function", **f} for f in functions if isinstance(f, dict)]
    assert len(flat) == len(nested) > 0
