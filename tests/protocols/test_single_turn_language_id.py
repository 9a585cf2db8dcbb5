"""``language_id:`` in the run config chooses the reply's spoken-language identifier."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from rich.console import Console

from voxeval.audio import Audio, write_audio
from voxeval.config import SystemSpec, parse_run_config
from voxeval.providers.asr.spoken_language import SpokenLanguage
from voxeval.providers.base import ProviderBase, Transcript
from voxeval.registry import register
from voxeval.runner.execute import run_evaluation
from voxeval.systems.base import Reply, Turn

RATE = 16000
CLIP = Audio((0.1 * np.sin(np.arange(RATE) * 0.05)).astype(np.float32), RATE)


@register("asr", "test-hears-spanish")
class HearsSpanish(ProviderBase):
    """An ASR whose language detection always hears Spanish (what the metric does with the
    verdict is the point)."""

    name = "test-hears-spanish"

    def transcribe(self, audio: Audio, **_: Any) -> Transcript:
        return Transcript(text="hola", language="es", provider=self.name)

    def identity(self) -> dict[str, Any]:
        return {"provider": self.name}

    def identify_language(self, audio: Audio) -> SpokenLanguage:
        return SpokenLanguage("es", 0.9, {"es": 0.9, "en": 0.02}, model=self.name)


@register("system", "test-speaks-a-tone")
class SpeaksATone:
    def __init__(self, name: str) -> None:
        self.name = name

    @classmethod
    def from_spec(cls, spec: SystemSpec, ctx: Any = None) -> SpeaksATone:
        return cls(spec.name)

    def identity(self) -> dict[str, Any]:
        return {"type": "test-speaks-a-tone"}

    def reply(self, history: Sequence[Turn]) -> Reply:
        return Reply(audio=CLIP, text="Hola.", timing={"total_s": 0.0})


@pytest.mark.models
def test_the_configured_identifier_judges_the_reply_language(tmp_path: Path) -> None:
    write_audio(CLIP, tmp_path / "query.wav")
    suite = {
        "name": "lang",
        "protocol": "single_turn",
        "queries": [{"id": "q1", "text": "Hello?", "category": "SR", "audio": "query.wav"}],
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite), encoding="utf-8")
    config = parse_run_config(
        {
            "suite": str(tmp_path / "suite.yaml"),
            "systems": [{"name": "tone", "type": "test-speaks-a-tone"}],
            "language_id": {"provider": "test-hears-spanish"},
            "metrics": ["language"],
            "build": {"dir": str(tmp_path / "built"), "profiles": 1, "conditions": ["clean"]},
            "cache_dir": str(tmp_path / "cache"),
        }
    )
    run = run_evaluation(config, tmp_path / "run", console=Console(quiet=True))
    (scores,) = [json.loads(p.read_text()) for p in run.rglob("scores.json")]
    language = scores["language"]
    assert language["value"] == 0.0 and language["passed"] is False  # English was expected
    assert language["details"]["detected"] == "es"
