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
def runs_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the tiny runs are made, each on first use: a test that needs two of them does
    not pay for the other two (the single-turn run's input check loads Whisper and DNSMOS)."""
    return tmp_path_factory.mktemp("viewer-runs")


@pytest.fixture(scope="session")
def single_run(runs_folder: Path) -> Path:
    return tiny_runs.single_turn_run(runs_folder)


@pytest.fixture(scope="session")
def live_run(runs_folder: Path) -> Path:
    return tiny_runs.live_text_run(runs_folder)


@pytest.fixture(scope="session")
def audio_run(runs_folder: Path) -> Path:
    return tiny_runs.live_audio_run(runs_folder)


@pytest.fixture(scope="session")
def dialogue_run(runs_folder: Path) -> Path:
    return tiny_runs.multi_turn_run(runs_folder)


@pytest.fixture(scope="session")
def runs_root(
    runs_folder: Path, single_run: Path, live_run: Path, audio_run: Path, dialogue_run: Path
) -> Path:
    """A folder holding the four tiny runs (and their inputs, which are not runs)."""
    return runs_folder


@pytest.fixture(scope="session")
def generated_run(tmp_path_factory: pytest.TempPathFactory) -> SyntheticRun:
    return synthetic_run(tmp_path_factory.mktemp("generated") / "gen-run", 130, seed=7)


@pytest.fixture(scope="session")
def client(runs_root: Path) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    from voxeval.viewer import create_app

    with TestClient(create_app([], runs_root)) as test_client:
        yield test_client
