from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from voxeval.config import RunConfig
from voxeval.errors import ProviderUnavailable
from voxeval.protocols.context import NO_JUDGE_REASON, RunContext
from voxeval.protocols.contract import PROTOCOLS
from voxeval.providers.base import Availability
from voxeval.providers.factory import system_component
from voxeval.registry import register
from voxeval.store import RunStore

CREATED: list[dict[str, Any]] = []


@register("llm", "ctx-test-llm")
class CountingLLM:
    """A provider registered only for these tests; counts constructions."""

    name = "ctx-test-llm"

    def __init__(self, model: str = "m", temperature: float = 0.0) -> None:
        CREATED.append({"model": model, "temperature": temperature})
        self.model = model

    def identity(self) -> dict[str, Any]:
        return {"model": self.model}


@register("llm", "ctx-test-missing")
class MissingLLM:
    name = "ctx-test-missing"

    @classmethod
    def availability(cls, **_: Any) -> Availability:
        return Availability(False, "weights not installed")


def make_ctx(tmp_path: Path, **fields: Any) -> RunContext:
    fields.setdefault("cache_dir", str(tmp_path / "cache"))
    config = RunConfig(suite="x", systems=[{"name": "s", "type": "cascade"}], **fields)
    return RunContext(config=config, store=RunStore(tmp_path / "run"), seed=config.seed)


def test_provider_is_memoised_per_canonical_spec(tmp_path: Path) -> None:
    CREATED.clear()
    ctx = make_ctx(tmp_path)
    a = ctx.provider("llm", {"provider": "ctx-test-llm", "model": "x", "temperature": 0.5})
    b = ctx.provider("llm", {"temperature": 0.5, "model": "x", "provider": "ctx-test-llm"})
    c = ctx.provider("llm", {"provider": "ctx-test-llm", "model": "y"})
    assert a is b and a is not c and len(CREATED) == 2
    models = yaml.safe_load((tmp_path / "run" / "run.yaml").read_text())["models"]["llm"]
    assert {"provider": "ctx-test-llm", "model": "x"} in models


def test_concurrent_first_use_builds_one_instance(tmp_path: Path) -> None:
    CREATED.clear()
    ctx = make_ctx(tmp_path)
    results: list[Any] = []
    threads = [
        threading.Thread(target=lambda: results.append(ctx.provider("llm", "ctx-test-llm")))
        for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(CREATED) == 1 and all(r is results[0] for r in results)


def test_judge_absent_or_unavailable_gives_reason(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    assert ctx.judge() is None and ctx.judge_unavailable_reason() == NO_JUDGE_REASON
    ctx2 = make_ctx(tmp_path / "2", judge={"provider": "ctx-test-missing"})
    assert ctx2.judge() is None
    assert "weights not installed" in (ctx2.judge_unavailable_reason() or "")
    with pytest.raises(ProviderUnavailable):
        ctx2.provider("llm", "ctx-test-missing")
    ctx3 = make_ctx(tmp_path / "3", judge={"provider": "ctx-test-llm"})
    assert isinstance(ctx3.judge().inner, CountingLLM) and ctx3.judge_unavailable_reason() is None


def test_providers_go_through_the_call_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = make_ctx(tmp_path)
    wrapped = ctx.provider("llm", "ctx-test-llm")
    assert isinstance(wrapped.inner, CountingLLM)
    assert Path(wrapped.cache.root) == tmp_path / "cache"
    monkeypatch.setenv("VOXEVAL_NO_CACHE", "1")
    assert isinstance(make_ctx(tmp_path / "b").provider("llm", "ctx-test-llm"), CountingLLM)


def test_system_components_are_never_cached_but_share_the_model(tmp_path: Path) -> None:
    CREATED.clear()
    ctx = make_ctx(tmp_path)
    scoring = ctx.provider("llm", "ctx-test-llm")
    component = ctx.provider("llm", "ctx-test-llm", cache=False)
    assert isinstance(component, CountingLLM) and not hasattr(component, "cache_stats")
    assert scoring.inner is component and len(CREATED) == 1  # one model load
    assert ctx.provider("llm", "ctx-test-llm") is scoring
    assert system_component(ctx, "llm", "ctx-test-llm") is component
    assert system_component(ctx, "llm", None) is None
    models = yaml.safe_load((tmp_path / "run" / "run.yaml").read_text())["models"]["llm"]
    assert models == [{"provider": "ctx-test-llm", "model": "m"}]  # recorded once


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
