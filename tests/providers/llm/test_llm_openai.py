"""The OpenAI-compatible chat provider against a scripted server on 127.0.0.1."""

from __future__ import annotations

import email.utils
import json
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.fakes.openai_server import (
    FakeOpenAIServer,
    FakeResponse,
    chat_text,
    chat_tool_call,
    error,
)
from voxeval.errors import ConfigError, EndpointError, LLMOutputError
from voxeval.providers import ProviderSpec, availability, create_provider
from voxeval.providers.http.openai_http import parse_retry_after
from voxeval.providers.llm.llm_openai import OpenAIChat

ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "integer"}},
    "required": ["answer"],
}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "parameters": {"type": "object", "properties": {"id": {"type": "integer"}}},
        },
    }
]
USER = [{"role": "user", "content": "What is 2 + 2?"}]


class SleepRecorder:
    """Records the backoff delays the client asks for (and really sleeps them)."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        time.sleep(seconds)


def make_llm(server: FakeOpenAIServer, **options: Any) -> OpenAIChat:
    settings: dict[str, Any] = {"backoff_base_s": 0.01, "backoff_max_s": 1.0, **options}
    return OpenAIChat(base_url=server.url, model="test-model", **settings)


def test_plain_chat_sends_openai_request(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(chat_text("four", prompt_tokens=12, completion_tokens=3))
    llm = make_llm(openai_server, extra_body={"top_p": 0.5})
    reply = llm.chat(USER, temperature=0.0, seed=7, max_tokens=20)
    assert reply.text == "four"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (12, 3)
    assert reply.usage.cost_usd is None  # no price configured
    assert reply.model == "fake-model" and reply.latency_s > 0 and not reply.cached
    request = openai_server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "test-model" and request.body["messages"] == USER
    assert request.body["seed"] == 7 and request.body["max_tokens"] == 20
    assert request.body["top_p"] == 0.5
    assert "authorization" not in {k.lower() for k in request.headers}


def test_schema_valid_json_is_parsed(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(chat_text('```json\n{"answer": 4}\n```'))
    reply = make_llm(openai_server).chat(USER, response_schema=ANSWER_SCHEMA)
    assert reply.parsed == {"answer": 4}
    fmt = openai_server.requests[0].body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"] == ANSWER_SCHEMA
    assert fmt["json_schema"]["name"] == "response"


def test_invalid_then_valid_json_is_retried_with_a_correction(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.push(
        chat_text("four"), chat_text('{"answer": "four"}'), chat_text('{"answer": 4}')
    )
    llm = make_llm(openai_server, schema_retries=2)
    reply = llm.chat(USER, response_schema=ANSWER_SCHEMA)
    assert reply.parsed == {"answer": 4}
    assert len(openai_server.requests) == 3
    assert reply.usage.prompt_tokens == 30 and reply.usage.completion_tokens == 15
    second = openai_server.requests[1].body["messages"]
    assert second[-2] == {"role": "assistant", "content": "four"}
    assert "not JSON" in second[-1]["content"]
    third = openai_server.requests[2].body["messages"]
    assert "answer" in third[-1]["content"] and "integer" in third[-1]["content"]
    assert llm.stats()["schema_retries"] == 2


def test_always_invalid_json_raises_with_raw_text(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(chat_text("nope"), chat_text("still no"), chat_text('{"answer": 1.5}'))
    with pytest.raises(LLMOutputError) as caught:
        make_llm(openai_server, schema_retries=2).chat(USER, response_schema=ANSWER_SCHEMA)
    assert caught.value.attempts == 3
    assert caught.value.raw_text == '{"answer": 1.5}'
    assert "3 attempts" in str(caught.value) and "test-model" in str(caught.value)
    assert len(openai_server.requests) == 3


def test_json_object_and_prompt_modes_for_older_servers(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(chat_text('{"answer": 4}'), chat_text('{"answer": 4}'))
    system = [{"role": "system", "content": "Be brief."}, *USER]
    make_llm(openai_server, json_mode="json_object").chat(system, response_schema=ANSWER_SCHEMA)
    make_llm(openai_server, json_mode="prompt").chat(USER, response_schema=ANSWER_SCHEMA)
    first, second = (r.body for r in openai_server.requests)
    assert first["response_format"] == {"type": "json_object"}
    assert first["messages"][0]["content"].startswith("Be brief.")
    assert '"answer"' in first["messages"][0]["content"] and len(first["messages"]) == 2
    assert "response_format" not in second
    assert second["messages"][0]["role"] == "system" and "JSON" in second["messages"][0]["content"]
    with pytest.raises(ConfigError, match="json_mode"):
        make_llm(openai_server, json_mode="xml")


def test_bad_schema_is_a_config_error(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(chat_text("{}"))
    with pytest.raises(ConfigError, match="response_schema"):
        make_llm(openai_server).chat(USER, response_schema={"type": "no-such-type"})


def test_tool_calls_are_parsed(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(
        chat_tool_call("lookup", {"id": 3}, call_id="c1"), chat_tool_call("lookup", "{id: 3")
    )
    llm = make_llm(openai_server)
    good = llm.chat(USER, tools=TOOLS)
    assert openai_server.requests[0].body["tools"] == TOOLS
    assert good.text == ""
    (call,) = good.tool_calls
    assert (call.id, call.name, call.arguments) == ("c1", "lookup", {"id": 3})
    assert json.loads(call.raw_arguments) == {"id": 3} and call.arguments_valid
    (bad,) = llm.chat(USER, tools=TOOLS).tool_calls
    assert bad.arguments == {} and bad.raw_arguments == "{id: 3" and not bad.arguments_valid


def test_429_and_5xx_are_retried_with_growing_backoff(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(error(429), error(500), error(503), chat_text("ok"))
    sleeps = SleepRecorder()
    llm = make_llm(openai_server, sleep=sleeps, backoff_base_s=0.02)
    assert llm.chat(USER).text == "ok"
    assert len(openai_server.requests) == 4
    assert len(sleeps.delays) == 3
    assert sleeps.delays[0] < sleeps.delays[1] < sleeps.delays[2]
    assert 0.02 <= sleeps.delays[0] <= 0.025 and 0.08 <= sleeps.delays[2] <= 0.1
    stats = llm.stats()
    assert stats["retries"] == 3 and stats["requests"] == 4 and stats["calls"] == 1


def test_retry_after_header_is_honoured(openai_server: FakeOpenAIServer) -> None:
    limited = FakeResponse(
        status=429, json_body={"error": "slow down"}, headers={"Retry-After": "0.3"}
    )
    openai_server.push(limited, chat_text("ok"))
    sleeps = SleepRecorder()
    started = time.perf_counter()
    assert make_llm(openai_server, sleep=sleeps).chat(USER).text == "ok"
    assert sleeps.delays == [0.3]
    assert time.perf_counter() - started >= 0.3


def test_timeout_is_retried_then_reported(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(FakeResponse(json_body={}, delay_s=1.0), chat_text("late but fine"))
    llm = make_llm(openai_server, timeout_s=0.3)
    assert llm.chat(USER).text == "late but fine"
    assert llm.stats()["timeouts"] == 1
    openai_server.push(FakeResponse(json_body={}, delay_s=1.0), FakeResponse(delay_s=1.0))
    with pytest.raises(EndpointError, match=r"gave up after 2 attempts; last: timed out"):
        make_llm(openai_server, timeout_s=0.3, max_retries=1).chat(USER)


def test_client_errors_are_not_retried(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(error(400, "model 'x' does not exist"))
    sleeps = SleepRecorder()
    with pytest.raises(EndpointError) as caught:
        make_llm(openai_server, sleep=sleeps).chat(USER)
    message = str(caught.value)
    assert (
        "/v1/chat/completions" in message and "HTTP 400" in message and "does not exist" in message
    )
    assert len(openai_server.requests) == 1 and sleeps.delays == []


def test_persistent_server_errors_give_up(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(error(500, "boom"), error(502, "boom"), error(500, "final boom"))
    with pytest.raises(
        EndpointError, match=r"gave up after 3 attempts; last: HTTP 500: final boom"
    ):
        make_llm(openai_server, max_retries=2).chat(USER)
    assert len(openai_server.requests) == 3


def test_connection_errors_are_retried_then_reported() -> None:
    with socket.socket() as sock:  # a port that nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    sleeps = SleepRecorder()
    llm = OpenAIChat(
        base_url=f"http://127.0.0.1:{port}/v1",
        model="m",
        max_retries=2,
        backoff_base_s=0.01,
        sleep=sleeps,
    )
    with pytest.raises(EndpointError, match="connection failed"):
        llm.chat(USER)
    assert len(sleeps.delays) == 2 and llm.stats()["connection_errors"] == 3
    assert not llm.ping().available


def test_api_key_is_sent_but_not_in_identity(
    openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VOXEVAL_TEST_KEY", "sk-test-secret-value")
    openai_server.push(chat_text("ok"))
    llm = make_llm(openai_server, api_key_env="VOXEVAL_TEST_KEY")
    llm.chat(USER)
    headers = {k.lower(): v for k, v in openai_server.requests[0].headers.items()}
    assert headers["authorization"] == "Bearer sk-test-secret-value"
    assert "sk-test-secret-value" not in json.dumps(llm.identity())
    assert llm.ping().available
    monkeypatch.delenv("VOXEVAL_TEST_KEY")
    assert "VOXEVAL_TEST_KEY" in llm.ping().reason


def test_availability_names_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VOXEVAL_MISSING_KEY", raising=False)
    no_url = availability("llm", ProviderSpec(provider="openai", model="m"))
    assert not no_url.available and "base_url" in no_url.reason
    no_model = availability("llm", ProviderSpec(provider="openai", base_url="http://h/v1"))
    assert not no_model.available and "model" in no_model.reason
    no_key = availability(
        "llm",
        ProviderSpec(
            provider="openai", base_url="http://h/v1", model="m", api_key_env="VOXEVAL_MISSING_KEY"
        ),
    )
    assert not no_key.available and "VOXEVAL_MISSING_KEY" in no_key.reason


def test_concurrency_limit_per_endpoint() -> None:
    lock = threading.Lock()
    in_flight = 0
    peak = 0

    def slow(path: str, body: Any) -> FakeResponse:
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        time.sleep(0.15)
        with lock:
            in_flight -= 1
        return chat_text("ok")

    with FakeOpenAIServer(responder=slow) as server:
        # Two provider objects on one endpoint share the limit.
        first = make_llm(server, max_concurrency=2)
        second = make_llm(server, max_concurrency=2)
        with ThreadPoolExecutor(max_workers=6) as pool:
            replies = list(pool.map(lambda i: (first, second)[i % 2].chat(USER), range(6)))
    assert [r.text for r in replies] == ["ok"] * 6
    assert peak == 2


def test_cost_accounting(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(
        chat_text("a", prompt_tokens=1000, completion_tokens=500),
        chat_text("b", prompt_tokens=2000, completion_tokens=0),
    )
    llm = make_llm(openai_server, price_per_1k_input=0.5, price_per_1k_output=2.0)
    assert llm.chat(USER).usage.cost_usd == pytest.approx(1.5)
    assert llm.chat(USER).usage.cost_usd == pytest.approx(1.0)
    stats = llm.stats()
    assert stats["cost_usd"] == pytest.approx(2.5)
    assert (stats["prompt_tokens"], stats["completion_tokens"]) == (3000, 500)


def test_factory_builds_the_provider(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(chat_text("hi"))
    llm = create_provider(
        "llm", {"provider": "openai", "base_url": openai_server.url, "model": "m"}
    )
    assert llm.chat(USER).text == "hi"
    assert llm.identity() == {
        "provider": "openai",
        "base_url": openai_server.url,
        "model": "m",
        "json_mode": "json_schema",
        "strict_schema": False,
        "schema_retries": 2,
        "extra_body": {},
    }


def test_retry_after_formats() -> None:
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past
    soon = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 <= (parse_retry_after(soon) or 0) <= 30
    assert parse_retry_after("99999") == 120.0 and parse_retry_after("soon") is None
    assert parse_retry_after("99999", cap_s=0.5) == 0.5
