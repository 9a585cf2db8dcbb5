"""Judge accounting: ``judge_calls`` are logical calls, ``judge_requests`` the HTTP requests
they really sent — retries included, cached answers none."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_server import FakeOpenAIServer, FaultSchedule, chat_text
from voxeval.providers import create_provider
from voxeval.providers.caching.cache import ProviderCache, cached
from voxeval.providers.usage.usage_ledger import AttributedProvider, attributed, usage_ledger
from voxeval.scoring.judge import Judge, JudgeTemplate

TEMPLATE = JudgeTemplate(name="t", system="Grade.", user="{reply}")
FAST = {"timeout_s": 0.2, "max_retries": 3, "backoff_base_s": 0.001, "backoff_max_s": 0.002}


def judge_spec(url: str) -> dict[str, object]:
    return {"provider": "openai", "base_url": url, "model": "j", **FAST}


def test_judge_requests_count_retries_and_not_cache_hits(tmp_path: Path) -> None:
    faults = FaultSchedule(["server_error", None, "rate_limit", "malformed_json", None])
    with FakeOpenAIServer(lambda p, b: chat_text("Score: 6"), faults=faults) as server:
        llm = create_provider("llm", judge_spec(server.url))
        judge = Judge(cached("llm", llm, ProviderCache(tmp_path)))
        first = judge.grade(TEMPLATE, {"reply": "one"})
        second = judge.grade(TEMPLATE, {"reply": "two"})
        again = judge.grade(TEMPLATE, {"reply": "one"})  # the cache answers
        sent = len(server.posts())
    assert (first.value, second.value, again.value) == (6.0, 6.0, 6.0)
    assert first.accounting()["judge_calls"] == 1
    assert (first.http.requests, first.http.retries) == (2, 1)
    assert (second.http.requests, second.http.retries) == (3, 2)
    assert again.accounting()["judge_calls"] == 1 and again.accounting()["judge_requests"] == 0
    assert first.http.requests + second.http.requests == sent == 5


def test_attributed_judge_usage_survives_a_judge_that_gives_up() -> None:
    faults = FaultSchedule(["server_error"], cycle=True)
    with FakeOpenAIServer(lambda p, b: chat_text("Score: 6"), faults=faults) as server:
        llm = create_provider("llm", judge_spec(server.url))
        judge = Judge(AttributedProvider(llm, "judge", ("chat",)))
        with usage_ledger() as ledger:
            try:
                judge.grade(TEMPLATE, {"reply": "x"})
            except Exception as exc:  # the endpoint gave up after its retries
                assert "gave up after 4 attempts" in str(exc)
            else:
                raise AssertionError("the judge should have failed")
        sent = len(server.posts())
    used = ledger["judge"]
    assert (used.calls, used.requests, used.retries, sent) == (1, 4, 3, 4)


def test_nested_tallies_and_ledgers_close_by_identity() -> None:
    # Equal (empty) tallies open at two levels: closing the inner one must leave the outer
    # one counting (list.remove compared the dataclasses by value and closed the outer).
    from voxeval.providers.http import openai_http

    with openai_http.count_requests() as outer:
        with openai_http.count_requests() as inner:
            assert outer == inner
        assert [t is outer for t in openai_http._tallies.items()] == [True]
    with usage_ledger() as outer_ledger:
        with usage_ledger() as inner_ledger:
            assert outer_ledger == inner_ledger
        with attributed("judge"):
            pass
    assert outer_ledger["judge"].calls == 1
