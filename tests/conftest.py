"""Shared fixtures. Tests never reach the network except 127.0.0.1."""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.fakes.openai_server import FakeOpenAIServer
from tests.support.browser import browser, media_browser, page
from tests.support.postgres import postgres_cluster, postgres_url
from voxeval.audio import Audio

# shared fixtures
__all__ = ["browser", "media_browser", "page", "postgres_cluster", "postgres_url"]

# Belt and braces: any library that would try a model hub fails fast instead of hanging.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# Hermetic: every test session starts from an empty voxeval cache (call cache, assembled
# Whisper base), so results and timings never depend on what earlier runs left behind. Under
# pytest-xdist the workers share the controller's folder (they inherit its environment), so
# models are assembled and voices rendered once per session, not once per worker; the cache
# is safe for concurrent processes (atomic renames).
_SESSION_CACHE_VAR = "VOXEVAL_TEST_SESSION_CACHE"
_IS_XDIST_WORKER = "PYTEST_XDIST_WORKER" in os.environ
_SESSION_CACHE = (os.environ.get(_SESSION_CACHE_VAR) if _IS_XDIST_WORKER else None) or (
    tempfile.mkdtemp(prefix="voxeval-test-cache-")
)
os.environ[_SESSION_CACHE_VAR] = _SESSION_CACHE
os.environ["VOXEVAL_CACHE_DIR"] = _SESSION_CACHE


# Fixtures that start something outside the test process, by the marker `make check` uses to
# leave their tests out (`make test` runs them all).
_MARKER_OF_FIXTURE = {
    "browser": "browser",
    "page": "browser",
    "media_browser": "browser",
    "postgres_cluster": "postgres",
    "postgres_url": "postgres",
    "ray_cluster": "cluster",
}


# Tests that must not share the machine with other tests: a local Ray cluster takes both cores,
# and the kill -9 tests' timing windows assume nothing else is running. They get the marker
# `serial`, which `make test` runs in a second, single-process pass after the parallel one.
_SERIAL_MARKERS = ("cluster",)
_SERIAL_MODULES = ("tests/runner/test_kill_resume.py", "tests/runner/test_kill_points.py")


# Tests that need none of the above but take seconds (a whole run through the CLI, a seeded
# simulation): `make check` leaves out those listed here; scripts/heavy_tests.py rewrites the
# list from a measured durations report.
_HEAVY_LIST = Path(__file__).with_name("heavy_tests.txt")
_HEAVY_TESTS = frozenset(
    line.strip()
    for line in _HEAVY_LIST.read_text(encoding="utf-8").splitlines()
    if line.strip() and not line.startswith("#")
)


def pytest_configure(config: pytest.Config) -> None:
    """A short base folder for tmp_path (``/tmp/vxXXXXXXXX``, under xdist plus
    ``popen-gwN``): the CLI's console wraps at 80 columns, and pytest's default
    ``/tmp/pytest-of-USER/pytest-N`` plus xdist's worker folder made the temp paths in
    error messages long enough to be broken across lines."""
    if config.option.basetemp is None and not _IS_XDIST_WORKER:
        config.option.basetemp = tempfile.mkdtemp(prefix="vx")


def pytest_itemcollected(item: pytest.Item) -> None:
    """Mark a test by the external parts its fixtures start (fixture closure, so a fixture
    that depends on ``browser`` marks its tests too), and mark the heavy ones ``serial``.
    Worker placement is by file (``--dist loadfile``), so module-scoped fixtures such as a
    browser or a shared run start once per module. (xdist's ``loadgroup`` cannot be used:
    pytest-xdist 3.8 renames node ids through an attribute pytest 9.2 no longer reads.)"""
    markers = sorted({_MARKER_OF_FIXTURE.get(f, "") for f in item.fixturenames} - {""})
    for name in markers:
        item.add_marker(name)
    module = item.nodeid.split("::", 1)[0]
    if item.nodeid in _HEAVY_TESTS or module in _HEAVY_TESTS:  # a test, or its whole file
        item.add_marker("heavy")
    if module in _SERIAL_MODULES or any(m in _SERIAL_MARKERS for m in markers):
        item.add_marker("serial")
        item.add_marker("heavy")  # it needs the machine alone: never in the fast lane


# A run's context holds its models (Whisper base, DNSMOS, Piper: about 2 GB for a single-turn
# run with its input check) in reference cycles, which the collector reaches only in a full
# pass; a CLI run is one process, but this session runs hundreds of them and grew past 20 GB.
# A full pass whenever the resident set grew by COLLECT_AFTER_MB since the last one frees them
# without paying a pass after every test.
COLLECT_AFTER_MB = 1024
_last_collect_mb = [0.0]


def _resident_mb() -> float:
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            pages = int(statm.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0.0
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def pytest_runtest_teardown(item: pytest.Item) -> None:
    resident = _resident_mb()
    if resident - _last_collect_mb[0] > COLLECT_AFTER_MB:
        gc.collect()
        _last_collect_mb[0] = _resident_mb()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not _IS_XDIST_WORKER:  # the controller ends last; a worker may finish before another
        shutil.rmtree(_SESSION_CACHE, ignore_errors=True)


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
