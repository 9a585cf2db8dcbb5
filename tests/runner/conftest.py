"""Fixtures of the runner tests: a local Ray cluster (2 CPUs, no dashboard, its own temp
folder), started once per test module that asks for it."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

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
