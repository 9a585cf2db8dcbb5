"""Scenario tools served per call over MCP (the official SDK's streamable HTTP client, over
127.0.0.1) and plain HTTP: an external agent completes the scenario, concurrent calls keep
separate databases, a wrong or revoked token is refused."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

pytest.importorskip("mcp")
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.simulation.helpers import scenario, write_suite
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.scoring.calls.task_completion import compare_final_state
from voxeval.systems.tool_service import ToolGrant, ToolService


def mcp_agent(grant: ToolGrant, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """An external agent: lists the tools over MCP, then makes ``calls`` in order."""

    async def run() -> list[Any]:
        headers = {"Authorization": f"Bearer {grant.token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            streamable_http_client(grant.mcp_url, http_client=http) as streams,
            ClientSession(streams[0], streams[1]) as session,
        ):
            await session.initialize()
            listed = await session.list_tools()
            out: list[Any] = [sorted(t.name for t in listed.tools)]
            for name, arguments in calls:
                result = await session.call_tool(name, arguments)
                out.append((result.is_error, json.loads(result.content[0].text)))  # type: ignore[union-attr]
            return out

    return anyio.run(run)


BOOKING = [
    ("verify_member", {"member_id": "KX4", "date_of_birth": "1980-05-01"}),
    ("book_visit", {"day": "friday"}),
]


@pytest.fixture
def suite(tmp_path: Path) -> Any:
    return load_scenario_suite(write_suite(tmp_path / "suite", [scenario("a"), scenario("b")]))


@pytest.fixture
def service() -> Any:
    svc = ToolService()
    yield svc
    svc.stop()


def test_an_mcp_agent_completes_the_scenario(suite: Any, service: ToolService) -> None:
    sc = suite.scenarios[0]
    runtime = ToolRuntime(sc, suite.tools)
    grant = service.register(runtime, sc.id)
    listed, verified, booked = mcp_agent(grant, BOOKING)
    assert listed == ["book_visit", "verify_member"]
    assert verified == (False, {"status": "verified", "name": "Ann"})
    assert booked == (False, {"status": "booked", "day": "friday"})
    assert [r.name for r in runtime.log] == ["verify_member", "book_visit"]
    score = compare_final_state(sc.expected_db, runtime.final_state())
    assert score.value == 1.0
    assert [r.name for r in service.records_since(grant.token)] == ["verify_member", "book_visit"]
    assert service.records_since(grant.token) == []  # each record handed over once


def test_a_refused_call_is_an_mcp_error_and_leaves_the_database(
    suite: Any, service: ToolService
) -> None:
    sc = suite.scenarios[0]
    runtime = ToolRuntime(sc, suite.tools)
    grant = service.register(runtime, sc.id)
    _, booked = mcp_agent(grant, [("book_visit", {"day": "friday"})])
    assert booked[0] is True and booked[1]["error"] == "not_authenticated"
    assert compare_final_state(sc.expected_db, runtime.final_state()).value == 0.0


def test_concurrent_calls_keep_separate_databases(suite: Any, service: ToolService) -> None:
    a, b = suite.scenarios
    run_a, run_b = ToolRuntime(a, suite.tools), ToolRuntime(b, suite.tools)
    grant_a, grant_b = service.register(run_a, a.id), service.register(run_b, b.id)
    assert grant_a.mcp_url == grant_b.mcp_url and grant_a.token != grant_b.token
    results: dict[str, Any] = {}
    threads = [
        threading.Thread(target=lambda: results.update(a=mcp_agent(grant_a, BOOKING))),
        threading.Thread(
            target=lambda: results.update(b=mcp_agent(grant_b, [("book_visit", {"day": "x"})]))
        ),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert results["a"][-1] == (False, {"status": "booked", "day": "friday"})
    assert results["b"][-1][0] is True  # b never authenticated: its own session is empty
    assert run_a.db["members"]["KX4"]["visit"] == "friday"
    assert run_b.db["members"]["KX4"]["visit"] is None
    assert [r.name for r in run_b.log] == ["book_visit"] and run_b.session == {}


def test_a_wrong_or_revoked_token_is_refused(suite: Any, service: ToolService) -> None:
    sc = suite.scenarios[0]
    runtime = ToolRuntime(sc, suite.tools)
    grant = service.register(runtime, sc.id)
    wrong = ToolGrant("not-the-token", grant.mcp_url, grant.openapi_url, grant.http_base)
    with pytest.raises(BaseException):  # noqa: B017  (the SDK wraps the 401 in a task group)
        mcp_agent(wrong, BOOKING)
    hello = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    raw = httpx.post(grant.mcp_url, json=hello, headers={"Authorization": "Bearer nope"})
    assert raw.status_code == 401
    http = httpx.post(
        f"{grant.http_base}/verify_member",
        json=BOOKING[0][1],
        headers={"Authorization": "Bearer nope"},
    )
    assert http.status_code == 401
    service.revoke(grant.token)
    gone = httpx.get(grant.openapi_url, headers={"Authorization": f"Bearer {grant.token}"})
    assert gone.status_code == 401
    assert runtime.log == []  # nothing reached the database


def test_plain_http_with_openapi(suite: Any, service: ToolService) -> None:
    sc = suite.scenarios[0]
    runtime = ToolRuntime(sc, suite.tools)
    grant = service.register(runtime, sc.id)
    auth = {"Authorization": f"Bearer {grant.token}"}
    spec = httpx.get(grant.openapi_url, headers=auth).json()
    assert spec["openapi"] == "3.1.0"
    assert sorted(spec["paths"]) == ["/tools/book_visit", "/tools/verify_member"]
    body = spec["paths"]["/tools/verify_member"]["post"]["requestBody"]
    assert body["content"]["application/json"]["schema"]["required"] == [
        "member_id",
        "date_of_birth",
    ]
    bad = httpx.post(f"{grant.http_base}/verify_member", json={"member_id": 4}, headers=auth)
    assert bad.status_code == 422 and bad.json()["error"] == "invalid_parameters"
    for name, arguments in BOOKING:
        r = httpx.post(f"{grant.http_base}/{name}", json=arguments, headers=auth)
        assert r.status_code == 200, r.text
    assert compare_final_state(sc.expected_db, runtime.final_state()).value == 1.0
    assert [r.valid for r in runtime.log] == [False, True, True]


def test_a_call_in_flight_at_revocation_never_changes_the_final_database(
    suite: Any, service: ToolService
) -> None:
    sc = suite.scenarios[0]
    runtime = ToolRuntime(sc, suite.tools)
    grant = service.register(runtime, sc.id)
    in_flight = service._call_for(grant.token)  # a request that passed the token check
    assert in_flight is not None
    service.revoke(grant.token)  # the call ends: its database is final
    assert in_flight.call(*BOOKING[0]) is None
    assert runtime.log == [] and runtime.session == {}


def test_a_websocket_bridge_agent_books_through_the_service(tmp_path: Path) -> None:
    """serve_tools on the websocket bridge: session.start carries the call's token and
    addresses; the agent's HTTP tool calls land on the timeline and in the call's database."""
    from websockets.sync.client import connect

    from tests.simulation.parties import ListCaller
    from voxeval.simulation.engine import run_call
    from voxeval.systems.live.ws_bridge import WebsocketBridgeAgent

    suite = load_scenario_suite(write_suite(tmp_path / "suite", [scenario("a")]))
    sc = suite.scenarios[0]
    bridge = WebsocketBridgeAgent(serve_tools=True, connect_timeout_s=10)
    url = bridge.listen()
    started: list[dict[str, Any]] = []

    def agent() -> None:
        with connect(url) as ws:
            ws.send(json.dumps({"type": "hello", "protocol_version": 2}))
            start = json.loads(ws.recv())
            started.append(start)
            service = start["tool_service"]
            auth = {"Authorization": f"Bearer {service['token']}"}

            def say(text: str) -> None:
                for message in ({"type": "agent.speech_start"}, {"type": "text", "text": text}):
                    ws.send(json.dumps(message))
                ws.send(json.dumps({"type": "agent.speech_end"}))

            say("Hello, clinic line.")
            for name, arguments in BOOKING:
                while json.loads(ws.recv())["type"] != "input.end":
                    pass
                r = httpx.post(f"{service['http_base']}/{name}", json=arguments, headers=auth)
                assert r.status_code == 200
                say(f"done: {name}")

    thread = threading.Thread(target=agent, daemon=True)
    thread.start()
    runtime = ToolRuntime(sc, suite.tools)
    result = run_call(sc, ListCaller("I want a visit", ["KX4 1980"]), bridge, runtime, mode="text")
    thread.join(10)
    assert result.system_fault is None and result.end_reason == "user_end_call"
    assert started[0]["tool_service"]["mcp_url"].endswith("/mcp")
    assert [t.name for t in result.timeline.tools] == ["verify_member", "book_visit"]
    assert [t.turn for t in result.timeline.tools] == [1, 2]
    assert compare_final_state(sc.expected_db, result.final_db).value == 1.0
    token = started[0]["tool_service"]["token"]
    gone = httpx.get(grant_openapi(started[0]), headers={"Authorization": f"Bearer {token}"})
    assert gone.status_code == 401  # the call's access ended with the call


def grant_openapi(start: dict[str, Any]) -> str:
    return str(start["tool_service"]["openapi_url"])
