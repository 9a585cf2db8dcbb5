"""DNSMOS keeps no onnxruntime memory arena: batches of 1-8 windows each asked for buffers of
their own size, and the arena kept them all (over 2 GB resident after one 20 s clip)."""

from __future__ import annotations

import numpy as np
import pytest

from voxeval.audio import Audio
from voxeval.config import ProviderSpec
from voxeval.providers.factory import availability, create_provider
from voxeval.providers.mos_dnsmos import DNSMOS

pytestmark = [
    pytest.mark.models,
    pytest.mark.skipif(
        not availability("mos", ProviderSpec(provider="dnsmos")).available, reason="needs speechmos"
    ),
]


def resident_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096 / 1e6


def test_long_clips_leave_no_arena_behind() -> None:
    mos = DNSMOS()
    noise = np.random.default_rng(0).standard_normal(16000 * 20).astype(np.float32) * 0.1
    short = mos.predict(Audio(noise[: 16000 * 3], 16000))
    before = resident_mb()
    long = mos.predict(Audio(noise, 16000))  # 11 windows: a batch of 8, then 3
    assert resident_mb() - before < 500  # about 2 GB more with the arena
    assert long.details["windows"] == 11 and short.details["windows"] == 3
    for session in (mos._primary, mos._p808):
        assert session.get_session_options().enable_cpu_mem_arena is False
    # the scores do not depend on the allocator: the same clip scores the same again
    assert create_provider("mos", "dnsmos").predict(Audio(noise, 16000)).scores == long.scores
