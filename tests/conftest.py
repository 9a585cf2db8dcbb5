"""Shared fixtures. Tests never reach the network except 127.0.0.1."""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np
import pytest

from tests.fakes.openai_server import FakeOpenAIServer
from voxeval.audio import Audio

# Belt and braces: any library that would try a model hub fails fast instead of hanging.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def tone() -> Audio:
    """One second of a 440 Hz tone at 16 kHz, amplitude 0.5."""
    t = np.arange(16000) / 16000
    return Audio((0.5 * np.sin(2 * np.pi * 440 * t)).astype(np.float32), 16000)


@pytest.fixture
def tmp_cache(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    """Point voxeval's cache at a per-test folder."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("VOXEVAL_CACHE_DIR", str(cache))
    return cache
