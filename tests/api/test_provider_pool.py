"""The provider pool of a run, on its own: one instance per canonical spec, its identity
recorded once, a failed load failing again without a retry, judges' slots decided once,
and everything forgotten by ``clear``."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.fakes.openai_server import FakeOpenAIServer
from voxeval.api.provider_pool import ProviderPool
from voxeval.config import ProviderSpec, RunConfig
from voxeval.errors import VoxevalError
from voxeval.store import RunStore


def make_pool(tmp_path: Path) -> ProviderPool:
    config = RunConfig(
        suite="x", systems=[{"name": "s", "type": "cascade"}], cache_dir=str(tmp_path / "c")
    )
    return ProviderPool(config, RunStore(tmp_path / "run"))


def test_one_instance_per_spec_recorded_once(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    pool = make_pool(tmp_path)
    spec = {"provider": "openai", "base_url": openai_server.url, "model": "m"}
    cached = pool.provider("llm", spec)
    bare = pool.provider("llm", dict(reversed(list(spec.items()))), cache=False)
    assert cached is not bare and cached.inner is bare  # type: ignore[attr-defined]
    ((key, loaded),) = pool.loaded()  # one model behind both
    assert loaded is bare and key.startswith('llm:{"') and '"model": "m"' in key
    run_yaml = yaml.safe_load((tmp_path / "run" / "run.yaml").read_text())
    assert [m["model"] for m in run_yaml["models"]["llm"]] == ["m"]
    pool.clear()
    assert pool.loaded() == []
    assert openai_server.requests == []  # building a provider sends nothing


def test_a_failed_load_and_a_missing_judge(tmp_path: Path) -> None:
    pool = make_pool(tmp_path)
    with pytest.raises(VoxevalError) as first:
        pool.provider("llm", "no-such-provider")
    with pytest.raises(VoxevalError) as second:
        pool.provider("llm", ProviderSpec(provider="no-such-provider"))
    assert second.value is first.value  # kept, not loaded again
    assert pool.optional("judge", "llm", None, "no judge") == (None, "no judge")
    slot = pool.optional("judge", "llm", ProviderSpec(provider="no-such-provider"), "x")
    assert slot == (None, "no judge")  # decided once per run
