"""The shared HTTP layer: what is retried, how long it waits, what the final error says, and
how requests are counted. Every remote provider goes through it (LLM, audio LLM, ASR, TTS)."""

from __future__ import annotations

import email.utils
import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.fakes.openai_server import (
    FakeOpenAIServer,
    FakeResponse,
    FaultSchedule,
    chat_text,
    error,
    fault_response,
)
from voxeval.audio import Audio
from voxeval.errors import EndpointError
from voxeval.providers import create_provider
from voxeval.providers.http.openai_http import (
    HTTPEndpoint,
    backoff_delay,
    count_requests,
    parse_retry_after,
    redact_url,
)

USER = [{"role": "user", "content": "hi"}]


class Sleeps:
    """Records the delays asked for without sleeping them."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def spec(server: FakeOpenAIServer, **options: Any) -> dict[str, Any]:
    return {"provider": "openai", "base_url": server.url, "model": "m", **options}


@pytest.mark.parametrize("kind", ["malformed_json", "empty_choices", "rate_limit", "hang"])
def test_chat_retries_every_transient_fault(openai_server: FakeOpenAIServer, kind: str) -> None:
    openai_server.push(fault_response(kind, hang_s=0.6), chat_text("fine"))
    sleeps = Sleeps()
    llm = create_provider("llm", spec(openai_server, timeout_s=0.3, sleep=sleeps))
    assert llm.chat(USER).text == "fine"
    stats = llm.stats()
    assert (stats["requests"], stats["retries"], stats["calls"]) == (2, 1, 1)
    assert stats.get("timeouts", 0) == (1 if kind == "hang" else 0)
    assert stats.get("malformed_replies", 0) == (kind in ("malformed_json", "empty_choices"))
    assert len(openai_server.requests) == 2 and len(sleeps.delays) == 1


def test_malformed_chat_reply_gives_up_with_attempts(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(*[fault_response("empty_choices")] * 3)
    llm = create_provider("llm", spec(openai_server, max_retries=2, sleep=Sleeps()))
    with pytest.raises(EndpointError, match="gave up after 3 attempts; last: unusable") as err:
        llm.chat(USER)
    assert (err.value.failure, err.value.attempts, err.value.status) == ("malformed", 3, 200)
    assert err.value.endpoint is not None and err.value.endpoint.endswith("/chat/completions")


@pytest.mark.parametrize("kind", ["rate_limit", "server_error", "hang", "malformed_json"])
def test_asr_retries_like_the_llm(openai_server: FakeOpenAIServer, tone: Audio, kind: str) -> None:
    openai_server.push(fault_response(kind, hang_s=0.6), FakeResponse(json_body={"text": "ok"}))
    asr = create_provider("asr", spec(openai_server, timeout_s=0.3, sleep=Sleeps()))
    assert asr.transcribe(tone).text == "ok"
    assert asr.stats()["requests"] == 2 and asr.stats()["retries"] == 1
    assert asr.stats()["timeouts"] == (1 if kind == "hang" else 0)


def test_asr_reply_without_text_is_retried_then_reported(
    openai_server: FakeOpenAIServer, tone: Audio
) -> None:
    openai_server.push(*[FakeResponse(json_body={"transcript": "x"})] * 2)
    asr = create_provider("asr", spec(openai_server, max_retries=1, sleep=Sleeps()))
    with pytest.raises(EndpointError, match="no 'text' field") as err:
        asr.transcribe(tone)
    assert err.value.failure == "malformed" and err.value.attempts == 2


def test_retry_after_seconds_and_dates_are_honoured_and_capped(
    openai_server: FakeOpenAIServer,
) -> None:
    soon = email.utils.format_datetime(datetime.now(UTC) + timedelta(seconds=20), usegmt=True)
    for value in ("7", soon, "9999"):
        openai_server.push(
            FakeResponse(status=429, json_body={}, headers={"Retry-After": value}),
        )
    openai_server.push(chat_text("ok"))
    sleeps = Sleeps()
    llm = create_provider("llm", spec(openai_server, retry_after_max_s=10.0, sleep=sleeps))
    assert llm.chat(USER).text == "ok"
    assert sleeps.delays[0] == 7.0
    assert 5.0 <= sleeps.delays[1] <= 10.0  # the date, about 20 s away, capped at 10 s
    assert sleeps.delays[2] == 10.0
    assert llm.stats()["backoff_s"] == pytest.approx(sum(sleeps.delays))


def test_backoff_schedule_is_seeded(openai_server: FakeOpenAIServer) -> None:
    def delays(seed: int) -> list[float]:
        endpoint = HTTPEndpoint(openai_server.url, backoff_base_s=1.0, backoff_seed=seed)
        return [endpoint.backoff(n) for n in range(5)]

    assert delays(3) == delays(3)
    assert delays(3) != delays(4)


@given(
    attempt=st.integers(min_value=0, max_value=80),
    base=st.floats(min_value=0.0, max_value=5.0),
    cap=st.floats(min_value=0.0, max_value=60.0),
    draw=st.floats(min_value=0.0, max_value=1.0, exclude_max=True),
)
def test_backoff_grows_exponentially_within_its_jitter_and_cap(
    attempt: int, base: float, cap: float, draw: float
) -> None:
    delay = backoff_delay(attempt, base, cap, draw)
    nominal = min(cap, base * 2.0**attempt)
    assert nominal <= delay <= min(cap, nominal * 1.25) + 1e-12
    assert backoff_delay(attempt + 1, base, cap, draw) >= delay or delay == cap


def test_parse_retry_after_edge_cases() -> None:
    assert parse_retry_after(None) is None and parse_retry_after("") is None
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after("1.5", cap_s=1.0) == 1.0


def test_final_error_names_the_endpoint_without_credentials(
    openai_server: FakeOpenAIServer,
) -> None:
    url = openai_server.url.replace("http://", "http://user:hunter2secret@") + "?key=sk-abc123"
    assert "hunter2secret" not in redact_url(url) and "sk-abc123" not in redact_url(url)
    assert redact_url(url).startswith("http://***@127.0.0.1:")
    openai_server.push(error(500), error(500))
    endpoint = HTTPEndpoint(url, max_retries=1, sleep=Sleeps())
    with pytest.raises(EndpointError) as err:
        endpoint.post_json("", {"x": 1})
    message = str(err.value)
    assert "hunter2secret" not in message and "sk-abc123" not in message
    assert "gave up after 2 attempts; last: HTTP 500" in message
    assert err.value.status == 500 and err.value.failure == "http"


def test_connection_failures_are_counted_and_typed() -> None:
    endpoint = HTTPEndpoint("http://127.0.0.1:9/v1", max_retries=2, sleep=Sleeps())
    with count_requests() as tally, pytest.raises(EndpointError) as err:
        endpoint.post_json("chat/completions", {})
    assert err.value.failure == "connection" and err.value.attempts == 3
    assert (tally.requests, tally.retries, tally.connection_errors) == (3, 2, 3)


def test_request_tallies_nest_and_stay_on_their_thread(openai_server: FakeOpenAIServer) -> None:
    openai_server.push(*[chat_text("ok")] * 3)
    llm = create_provider("llm", spec(openai_server))
    seen_elsewhere: list[int] = []

    def other_thread() -> None:
        with count_requests() as mine:
            llm.chat(USER)
        seen_elsewhere.append(mine.requests)

    with count_requests() as outer:
        llm.chat(USER)
        with count_requests() as inner:
            llm.chat(USER)
        worker = threading.Thread(target=other_thread)
        worker.start()
        worker.join()
    assert (outer.requests, inner.requests, seen_elsewhere) == (2, 1, [1])


def test_fault_schedule_is_deterministic() -> None:
    def kinds(seed: int) -> list[str | None]:
        schedule = FaultSchedule.seeded(0.2, seed=seed)
        return [schedule.next_fault() for _ in range(200)]

    first = kinds(5)
    assert first == kinds(5) and first != kinds(6)
    assert 20 <= sum(k is not None for k in first) <= 60
    fixed = FaultSchedule(["hang", None, "rate_limit"])
    assert [fixed.next_fault() for _ in range(5)] == ["hang", None, "rate_limit", None, None]
    with pytest.raises(ValueError, match="unknown fault kind"):
        FaultSchedule(["nope"])
