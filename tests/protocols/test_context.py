"""The run context: one shared instance per provider spec (the ``openai`` LLM, built against a
loopback server), judges and their reasons, the call cache, seeded streams and limits."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from tests.fakes.openai_server import FakeOpenAIServer
from voxeval.api.context import NO_JUDGE_REASON, RunContext
from voxeval.config import RunConfig
from voxeval.errors import ProviderUnavailable
from voxeval.protocols.contract import PROTOCOLS
from voxeval.providers.factory import system_component
from voxeval.providers.llm.llm_openai import OpenAIChat
from voxeval.store import RunStore


def llm_spec(server: FakeOpenAIServer, **fields: Any) -> dict[str, Any]:
    """The ``openai`` LLM on the loopback server (building it sends nothing)."""
    return {"provider": "openai", "base_url": server.url, "model": "m", **fields}


def make_ctx(tmp_path: Path, **fields: Any) -> RunContext:
    fields.setdefault("cache_dir", str(tmp_path / "cache"))
    config = RunConfig(suite="x", systems=[{"name": "s", "type": "cascade"}], **fields)
    return RunContext(config=config, store=RunStore(tmp_path / "run"), seed=config.seed)


def recorded_llms(tmp_path: Path) -> list[dict[str, Any]]:
    models: list[dict[str, Any]] = yaml.safe_load((tmp_path / "run" / "run.yaml").read_text())[
        "models"
    ]["llm"]
    return models


def test_provider_is_memoised_per_canonical_spec(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    ctx = make_ctx(tmp_path)
    url = openai_server.url
    a = ctx.provider("llm", llm_spec(openai_server, model="x", schema_retries=1))
    b = ctx.provider(
        "llm", {"schema_retries": 1, "model": "x", "base_url": url, "provider": "openai"}
    )
    c = ctx.provider("llm", llm_spec(openai_server, model="y"))
    assert a is b and a is not c
    assert a.inner is b.inner and a.inner is not c.inner  # type: ignore[attr-defined]
    # each model was built, and recorded, once
    assert [(m["model"], m["schema_retries"]) for m in recorded_llms(tmp_path)] == [
        ("x", 1),
        ("y", 2),
    ]
    assert openai_server.requests == []


def test_concurrent_first_use_builds_one_instance(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    ctx = make_ctx(tmp_path)
    spec = llm_spec(openai_server)
    results: list[Any] = []
    threads = [
        threading.Thread(target=lambda: results.append(ctx.provider("llm", spec))) for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 8 and all(r is results[0] for r in results)
    assert len(recorded_llms(tmp_path)) == 1


def test_judge_absent_or_unavailable_gives_reason(
    tmp_path: Path, openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VOXEVAL_CTX_TEST_KEY", raising=False)
    ctx = make_ctx(tmp_path)
    assert ctx.judge() is None and ctx.judge_unavailable_reason() == NO_JUDGE_REASON
    keyless = llm_spec(openai_server, api_key_env="VOXEVAL_CTX_TEST_KEY")
    ctx2 = make_ctx(tmp_path / "2", judge=keyless)
    assert ctx2.judge() is None
    assert "VOXEVAL_CTX_TEST_KEY (api_key_env) is not set" in (
        ctx2.judge_unavailable_reason() or ""
    )
    with pytest.raises(ProviderUnavailable, match="VOXEVAL_CTX_TEST_KEY"):
        ctx2.provider("llm", keyless)
    ctx3 = make_ctx(tmp_path / "3", judge=llm_spec(openai_server))
    judge = ctx3.judge()
    assert isinstance(judge.inner, OpenAIChat)  # type: ignore[union-attr]
    assert ctx3.judge_unavailable_reason() is None


def test_providers_go_through_the_call_cache(
    tmp_path: Path, openai_server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = make_ctx(tmp_path)
    wrapped = ctx.provider("llm", llm_spec(openai_server))
    assert isinstance(wrapped.inner, OpenAIChat)  # type: ignore[attr-defined]
    assert Path(wrapped.cache.root) == tmp_path / "cache"  # type: ignore[attr-defined]
    monkeypatch.setenv("VOXEVAL_NO_CACHE", "1")
    uncached = make_ctx(tmp_path / "b").provider("llm", llm_spec(openai_server))
    assert isinstance(uncached, OpenAIChat)


def test_system_components_are_never_cached_but_share_the_model(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    ctx = make_ctx(tmp_path)
    spec = llm_spec(openai_server)
    scoring = ctx.provider("llm", spec)
    component = ctx.provider("llm", spec, cache=False)
    assert isinstance(component, OpenAIChat) and not hasattr(component, "cache_stats")
    assert scoring.inner is component  # type: ignore[attr-defined]  # one model load
    assert ctx.provider("llm", spec) is scoring
    assert system_component(ctx, "llm", spec) is component
    assert system_component(ctx, "llm", None) is None
    assert recorded_llms(tmp_path) == [component.identity()]  # recorded once


def test_rng_depends_only_on_seed_and_keys(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, seed=3)
    same = make_ctx(tmp_path / "b", seed=3)
    other = make_ctx(tmp_path / "c", seed=4)
    draw = ctx.rng("q1", 0).random(4)
    assert np.array_equal(draw, same.rng("q1", 0).random(4))
    assert not np.array_equal(draw, ctx.rng("q1", 1).random(4))
    assert not np.array_equal(draw, other.rng("q1", 0).random(4))


def test_concurrency_limit(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path, concurrency=4)
    active, peak = [0], [0]
    lock = threading.Lock()

    def job() -> None:
        with ctx.limited("asr:slow", 2):
            with lock:
                active[0] += 1
                peak[0] = max(peak[0], active[0])
            time.sleep(0.05)
            with lock:
                active[0] -= 1

    threads = [threading.Thread(target=job) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert peak[0] == 2
    assert ctx.concurrency_limit("asr:slow") is ctx.concurrency_limit("asr:slow", 9)


def test_require_protocol_returns_the_run_protocol_or_says_it_is_missing(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    with pytest.raises(RuntimeError, match="no protocol"):
        ctx.require_protocol()
    protocol = PROTOCOLS.lookup("single_turn")()
    ctx.protocol = protocol
    assert ctx.require_protocol() is protocol
