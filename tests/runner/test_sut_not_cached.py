"""A system under test is never served from the call cache: every trial is a real call.

Both protocols, through ``voxeval run``, with the system's components behind a loopback
server: N trials make exactly N times the requests of one trial, even when the cache is warm
from an earlier run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from tests.simulation.helpers import scenario, write_suite
from tests.simulation.test_live_calls_models import responder as clinic_agent
from voxeval.audio import Audio, audio_to_wav_bytes, write_audio
from voxeval.cli.main import app


def tone(seconds: float, hz: float) -> Audio:
    t = np.arange(int(16000 * seconds)) / 16000
    return Audio((0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32), 16000)


def cascade_world(path: str, body: Any) -> FakeResponse:
    """ASR, LLM and TTS of a cascade system: the same answer every time (temperature 0)."""
    if path.endswith("/audio/transcriptions"):
        return FakeResponse(json_body={"text": "How long do I boil an egg?"})
    if path.endswith("/audio/speech"):
        return FakeResponse(raw=audio_to_wav_bytes(tone(0.6, 300)), content_type="audio/wav")
    return chat_text("Boil it for eight minutes.")


def run(config: dict[str, Any], tmp_path: Path, name: str, trials: int) -> None:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({**config, "trials": trials}))
    out = tmp_path / name
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output


@pytest.mark.models
def test_cascade_trials_are_independent_calls(tmp_path: Path) -> None:
    write_audio(tone(1.0, 200), tmp_path / "suite" / "q1.wav")
    suite = {
        "name": "one",
        "protocol": "single_turn",
        "queries": [{"id": "q1", "text": "How long do I boil an egg?", "category": "SR",
                     "audio": "q1.wav", "checklist": ["Gives 6-10 minutes"]}],
    }  # fmt: skip
    (tmp_path / "suite" / "suite.yaml").write_text(yaml.safe_dump(suite))
    with FakeOpenAIServer(cascade_world) as server:
        remote = {"provider": "openai", "base_url": server.url}
        config = {
            "suite": str(tmp_path / "suite"),
            "systems": [{"name": "casc", "type": "cascade", "asr": remote,
                         "llm": {**remote, "model": "m"}, "tts": remote}],
            "metrics": ["duration"],
            "build": {"profiles": 1, "conditions": ["clean"]},
            "cache_dir": str(tmp_path / "cache"),  # shared by both runs: warm for the second
        }  # fmt: skip
        run(config, tmp_path, "one", trials=1)
        one = len(server.posts("/chat/completions"))
        asr_one = len(server.posts("/audio/transcriptions"))
        run(config, tmp_path, "three", trials=3)
        three = len(server.posts("/chat/completions")) - one
        asr_three = len(server.posts("/audio/transcriptions")) - asr_one
    assert one == 1 and three == 3 * one
    assert asr_three == 3 * asr_one
    for trial in range(3):
        reply = next((tmp_path / "three" / "items").glob(f"q1__*/casc/{trial}/reply.json"))
        assert json.loads(reply.read_text())["details"]["usage"]["requests"] >= 3


@pytest.mark.models
def test_live_call_agent_trials_are_independent_calls(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", [scenario("book-1")])

    def world(path: str, body: Any) -> FakeResponse:
        if path.endswith("/audio/transcriptions"):
            return FakeResponse(json_body={"text": ""})  # the agent's ASR warming up
        return clinic_agent(path, body)

    with FakeOpenAIServer(world) as server:
        remote = {"provider": "openai", "base_url": server.url}
        config = {
            "suite": str(suite),
            "systems": [{"name": "agent", "type": "cascade",
                         "llm": {**remote, "model": "m"}, "asr": remote, "voice": None}],
            "seed": 1,
            "simulation": {"caller": "scripted", "mode": "text",
                           "latency_model": {"agent": {"kind": "fixed", "ms": 700}}},
            "cache_dir": str(tmp_path / "cache"),
        }  # fmt: skip
        run(config, tmp_path, "one", trials=1)
        one = len(server.posts("/chat/completions"))
        run(config, tmp_path, "three", trials=3)
        three = len(server.posts("/chat/completions")) - one
    assert one >= 3  # several agent turns, tool calls included
    assert three == 3 * one
    summary = json.loads((tmp_path / "three" / "report" / "summary.json").read_text())
    assert summary["systems"]["agent"]["task_completion"]["mean"] == 1.0
