"""DNSMOS's memory: no onnxruntime memory arena (batches of several sizes each left buffers
of their own size in it: over 2 GB resident after one 20 s clip) and one window per model
run (a batch of 8 windows took ~0.95 GB more while it ran); the scores are the same."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from voxeval.audio import Audio
from voxeval.config import ProviderSpec
from voxeval.providers.audio_analysis import mos_dnsmos
from voxeval.providers.audio_analysis.mos_dnsmos import DNSMOS
from voxeval.providers.factory import availability

pytestmark = [
    pytest.mark.models,
    pytest.mark.skipif(
        not availability("mos", ProviderSpec(provider="dnsmos")).available, reason="needs speechmos"
    ),
]


def resident_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096 / 1e6


def peak_while(call: Callable[[], Any]) -> tuple[float, Any]:
    """The resident set's growth over its level before ``call`` (sampled every 5 ms)."""
    base, peak, done = resident_mb(), [0.0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], resident_mb())
            time.sleep(0.005)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        result = call()
    finally:
        done.set()
        sampler.join()
    return max(peak[0], resident_mb()) - base, result


def test_long_clips_take_little_memory_and_score_as_a_batch_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mos = DNSMOS()
    # 17 s: 8 windows, one whole batch of 8 as before the fix (~0.95 GB more while it ran)
    noise = np.random.default_rng(0).standard_normal(16000 * 17).astype(np.float32) * 0.1
    clip = Audio(noise, 16000)
    mos.predict(Audio(noise[: 16000 * 3], 16000))  # first run: the sessions' own setup
    grown, scored = peak_while(lambda: mos.predict(clip))
    assert grown < 400  # ~1 GB in batches of 8; over 2 GB kept with the arena
    after = resident_mb()
    mos.predict(clip)
    assert resident_mb() - after < 50  # nothing kept from one clip to the next
    for session in (mos._primary, mos._p808):
        assert session.get_session_options().enable_cpu_mem_arena is False
    monkeypatch.setattr(mos_dnsmos, "_BATCH", 8)
    batched = mos.predict(clip)
    assert scored.scores == batched.scores
    assert batched.details["windows"] == 8
