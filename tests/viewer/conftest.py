"""Run folders shared by the viewer's tests (made once per session: they are read-only to
the viewer) and a viewer app over them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.viewer import tiny_runs
from tests.viewer.synthetic_run import SyntheticRun, synthetic_run


@pytest.fixture(scope="session")
def runs_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the four tiny runs (and their inputs, which are not runs)."""
    root = tmp_path_factory.mktemp("viewer-runs")
    tiny_runs.single_turn_run(root)
    tiny_runs.live_text_run(root)
    tiny_runs.live_audio_run(root)
    tiny_runs.multi_turn_run(root)
    return root


@pytest.fixture(scope="session")
def generated_run(tmp_path_factory: pytest.TempPathFactory) -> SyntheticRun:
    return synthetic_run(tmp_path_factory.mktemp("generated") / "gen-run", 130, seed=7)


@pytest.fixture(scope="session")
def client(runs_root: Path) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    from voxeval.viewer import create_app

    with TestClient(create_app([], runs_root)) as test_client:
        yield test_client
