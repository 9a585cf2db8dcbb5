"""Fixtures of the runner tests: a local Ray cluster (2 CPUs, no dashboard, its own temp
folder), and the scripted world of ``executor_world`` with the local executor's run of its
suite; each started once per test module that asks for it."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAIServer
from tests.runner.executor_world import N_QUERIES, World, run_cli, single_turn_config
from voxeval.runner.ray_limits import NAMESPACE


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        ray.shutdown()
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _temp_dir=tempfile.mkdtemp(prefix="vxray-"),
        ignore_reinit_error=True,
        log_to_driver=False,
        namespace=NAMESPACE,
    )
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def world() -> Iterator[tuple[FakeOpenAIServer, World]]:
    responder = World()
    with FakeOpenAIServer(responder) as server:
        yield server, responder


@pytest.fixture(scope="module")
def world_cache(tmp_path_factory) -> Path:
    """The call cache of the module's local run, for the runs that compare to it without
    comparing usage (kills, Ctrl-C, limits): their report's input check (Whisper base and
    DNSMOS on every query) and the scoring calls are read from it rather than made again.
    The systems under test are never cached."""
    return tmp_path_factory.mktemp("world-cache")


@pytest.fixture(scope="module")
def local_run(world, world_cache, tmp_path_factory) -> Path:
    """The local executor's run of the single-turn suite: what a run on another executor
    must equal. Its call cache is ``world_cache``."""
    server, responder = world
    tmp = tmp_path_factory.mktemp("local")
    started = time.perf_counter()
    config = single_turn_config(tmp, server.url, cache_dir=str(world_cache))
    result = run_cli(config, tmp / "run")
    assert result.exit_code == 0, result.output
    print(f"local run of {N_QUERIES} single-turn units: {time.perf_counter() - started:.1f} s")
    responder.replies.clear()
    return tmp / "run"


@pytest.fixture
def fresh_world(world) -> Iterator[tuple[FakeOpenAIServer, World]]:
    """The module's world with its counters cleared and no kill hook (also after the test)."""
    world[1].replies.clear()
    world[1].on_reply = None
    yield world
    world[1].on_reply = None
