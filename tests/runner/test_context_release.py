"""A run lets go of its models when it ends: a library user running several runs in one
process does not keep every earlier run's models alive (they used to live on in reference
cycles, about 2 GB per single-turn run, until a full pass of the cyclic collector)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAIServer
from tests.runner.kill_harness import FixedReplies, query_tone, single_turn_configs
from voxeval.api import provider_pool as pool_module
from voxeval.audio import audio_to_wav_bytes
from voxeval.config import ProviderSpec, load_run_config
from voxeval.providers.factory import availability
from voxeval.runner import execute, rescore, run_evaluation


@pytest.fixture
def collector_off() -> Iterator[None]:
    """No cyclic collection during the test: whatever dies, dies by its reference count."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class Loaded:
    """Weak references to every provider (and the model it wraps) and run context made."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.providers: list[tuple[str, weakref.ref[Any]]] = []
        self.contexts: list[weakref.ref[Any]] = []
        real_create = pool_module.create_provider
        real_open = execute.open_context

        def create(kind: str, spec: Any) -> Any:
            made = real_create(kind, spec)
            self.providers.append((f"{kind}:{spec.provider}", weakref.ref(made)))
            inner = getattr(made, "inner", None)
            if inner is not None:
                self.providers.append((f"{kind}:{spec.provider} (inner)", weakref.ref(inner)))
            return made

        def open_context(*args: Any, **kwargs: Any) -> Any:
            ctx = real_open(*args, **kwargs)
            self.contexts.append(weakref.ref(ctx))
            return ctx

        monkeypatch.setattr(pool_module, "create_provider", create)
        monkeypatch.setattr(execute, "open_context", open_context)

    def alive(self) -> list[str]:
        return [name for name, ref in self.providers if ref() is not None]


@pytest.mark.models
def test_a_finished_run_keeps_none_of_its_models(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collector_off: None
) -> None:
    if not availability("asr", ProviderSpec(provider="whisper-tiny-en")).available:
        pytest.skip("the packaged Whisper tiny.en weights are needed")
    loaded = Loaded(monkeypatch)
    wav = audio_to_wav_bytes(query_tone(2))
    system = FixedReplies({f"q{i}": (f"reply {i}", wav) for i in range(2)})
    with FakeOpenAIServer(system) as server:
        config_path, _ = single_turn_configs(tmp_path, server.url, 2, ["wer", "mos"])
        config = load_run_config(config_path).model_copy(
            update={"asr": ProviderSpec(provider="whisper-tiny-en")}
        )
        run_dir = run_evaluation(config, tmp_path / "run")
        # the run really used its models: Whisper tiny.en transcribed, DNSMOS rated
        made = {name for name, _ in loaded.providers}
        assert {"asr:whisper-tiny-en", "mos:dnsmos"} <= made, made
        assert loaded.alive() == []  # gone when run_evaluation returned, no collector pass
        # the context itself may wait for the collector (small objects); it holds nothing
        (context,) = loaded.contexts
        kept = context()
        assert kept is None or (kept._models.loaded() == [] and kept._systems == {})
        del kept

        # re-scoring a run lets go of its models too
        loaded.providers.clear()
        rescore(run_dir, ["wer"])
        assert "asr:whisper-tiny-en" in {name for name, _ in loaded.providers}
        assert loaded.alive() == []
