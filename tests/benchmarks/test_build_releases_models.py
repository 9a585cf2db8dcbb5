"""A suite build gives back what only it needed: the Kokoro model it loaded is forgotten by
the process once the build is over (a run's units never speak with it), and Piper's session
keeps no memory arena (every text has its own length)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from voxeval.benchmarks.build import build_suite
from voxeval.config import ProviderSpec
from voxeval.providers.factory import availability, create_provider
from voxeval.providers.tts import tts_kokoro, tts_piper

pytestmark = pytest.mark.models


def _suite(folder: Path) -> Path:
    suite = folder / "suite.yaml"
    query = {"id": "q", "text": "What time is it?", "category": "II", "checklist": ["A time."]}
    suite.write_text(yaml.safe_dump({"name": "t", "protocol": "single_turn", "queries": [query]}))
    return suite


@pytest.mark.skipif(
    not availability("tts", ProviderSpec(provider="kokoro")).available, reason="needs Kokoro"
)
def test_build_forgets_the_kokoro_model_and_a_later_build_loads_it_again(tmp_path: Path) -> None:
    options = {"profiles": ["female-adult-bright"], "engines": ["kokoro"], "conditions": ["clean"]}
    first = build_suite(_suite(tmp_path), tmp_path / "a", options, progress=False)
    assert first.items[0].entry["engine"] == "kokoro"
    assert tts_kokoro._model == {}  # nothing in the process holds the session any more
    second = build_suite(_suite(tmp_path), tmp_path / "b", options, progress=False)
    assert (tmp_path / "b" / second.items[0].entry["audio"]).read_bytes() == (
        tmp_path / "a" / first.items[0].entry["audio"]
    ).read_bytes()


@pytest.mark.skipif(
    not availability("tts", ProviderSpec(provider="piper")).available, reason="needs Piper"
)
def test_piper_session_has_no_memory_arena() -> None:
    create_provider("tts", "piper")
    voice, _ = tts_piper._load_joe()
    assert voice.session.get_session_options().enable_cpu_mem_arena is False
