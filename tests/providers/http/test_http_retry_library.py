"""The endpoint's retries are driven by tenacity (issue 41, point 5) with the schedule the
hand-written loop had: the same seeded delays, counted once per real retry, sync and async."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import tenacity

from tests.fakes.openai_server import FakeOpenAIServer, error
from voxeval.errors import EndpointError
from voxeval.providers.http.openai_http import HTTPEndpoint, backoff_delay


class Sleeps:
    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def seeded_schedule(seed: int, retries: int, base: float = 0.5, cap: float = 30.0) -> list[float]:
    import random

    rng = random.Random(seed)
    return [backoff_delay(n, base, cap, rng.random()) for n in range(retries)]


@pytest.fixture
def tenacity_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    for name in ("Retrying", "AsyncRetrying"):
        real = getattr(tenacity, name)

        def counting(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            calls.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(tenacity, name, counting)
    return calls


def test_sync_retries_go_through_tenacity_with_the_seeded_schedule(
    openai_server: FakeOpenAIServer, tenacity_calls: list[str]
) -> None:
    openai_server.push(*[error(503)] * 4)
    sleeps = Sleeps()
    ep = HTTPEndpoint(openai_server.url, max_retries=3, backoff_seed=7, sleep=sleeps)
    with pytest.raises(EndpointError, match="gave up after 4 attempts; last: HTTP 503") as err:
        ep.post_json("chat/completions", {"x": 1})
    assert err.value.attempts == 4 and err.value.status == 503
    assert tenacity_calls == ["Retrying"]
    assert sleeps.delays == pytest.approx(seeded_schedule(7, 3))
    stats = ep.stats.snapshot()
    assert (stats["requests"], stats["retries"], stats["errors"]) == (4, 3, 1)
    assert stats["backoff_s"] == pytest.approx(sum(seeded_schedule(7, 3)))
    # No delay was drawn after the last attempt: the next request continues the same stream.
    openai_server.push(error(503), error(503))
    with pytest.raises(EndpointError):
        HTTPEndpoint(openai_server.url, max_retries=1, backoff_seed=7, sleep=sleeps).post_json(
            "chat/completions", {}
        )
    assert sleeps.delays[-1] == pytest.approx(seeded_schedule(7, 1)[0])


def test_async_retries_go_through_tenacity_and_honour_retry_after(
    openai_server: FakeOpenAIServer, tenacity_calls: list[str]
) -> None:
    from tests.fakes.openai_server import FakeResponse

    openai_server.push(
        FakeResponse(
            status=429, json_body={"error": {"message": "slow"}}, headers={"Retry-After": "2"}
        ),
        FakeResponse(json_body={"ok": True}),
    )
    sleeps = Sleeps()
    ep = HTTPEndpoint(openai_server.url, max_retries=2, sleep=sleeps)

    async def go() -> dict[str, Any]:
        from voxeval.providers.http.http_clients import close_async_clients

        try:
            return await ep.apost_json("x", {})
        finally:
            await close_async_clients()

    assert asyncio.run(go()) == {"ok": True}
    assert tenacity_calls == ["AsyncRetrying"]
    assert sleeps.delays == [2.0]
    assert ep.stats.snapshot()["retries"] == 1
