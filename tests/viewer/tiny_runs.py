"""Tiny real runs for the viewer's tests, made by ``voxeval run`` with loopback services:

- a single-turn run: two spoken queries (real WAV tones), a replay system that answers both
  and one whose reply to q2 is missing (so that unit fails on our side, with error.txt);
- a text-mode live call run (tests/protocols/test_live_call's suite): the ``wrong`` agent
  books the wrong day, so its calls fail task completion and leave a database diff;
- an audio live call (espeak voices, a loopback ASR): recorded tracks and a timeline;
- a multi-turn run (tests/protocols/test_multi_turn's): a reply WAV per turn, rubric scores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse
from tests.protocols.test_live_call import write_config as write_live_config
from tests.support.query_clips import QUERY_SECONDS
from voxeval.audio import Audio, write_audio
from voxeval.cli.main import app

EGG = "Boil the egg for eight minutes."
SUNNY = "It is sunny today in Paris."


def tone(seconds: float, hz: float) -> Audio:
    t = np.arange(int(16000 * seconds)) / 16000
    return Audio((0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32), 16000)


def transcriber(path: str, body: Any) -> FakeResponse:
    """A loopback ASR: the reply WAVs differ in length, so the upload size tells them apart."""
    if path.endswith("/audio/transcriptions"):
        return FakeResponse(json_body={"text": EGG if len(body) < 30000 else SUNNY})
    return FakeResponse(status=404, json_body={"error": "not here"})


def _run(config: Path, out: Path, *extra: str) -> None:
    result = CliRunner().invoke(app, ["run", str(config), "--out", str(out), *extra])
    assert result.exit_code in (0, 1), result.output  # 1: a unit failed, as intended


def single_turn_run(folder: Path) -> Path:
    """The single-turn run folder (4 units: 3 done, 1 failed)."""
    suite = folder / "suite"
    for qid, hz in (("q1", 200), ("q2", 260)):
        write_audio(tone(QUERY_SECONDS, hz), suite / f"{qid}.wav")
    (suite / "suite.yaml").write_text(
        yaml.safe_dump(
            {
                "name": "two",
                "protocol": "single_turn",
                "queries": [
                    {
                        "id": "q1",
                        "text": "How long do I boil an egg?",
                        "category": "SR",
                        "audio": "q1.wav",
                        "checklist": ["Gives a time in minutes", "Says soft or hard"],
                        "assertions": [{"kind": "number", "values": ["8"], "tolerance": 2}],
                    },
                    {
                        "id": "q2",
                        "text": "What's the weather like?",
                        "category": "PF",
                        "subcategory": "tone",
                        "audio": "q2.wav",
                        "assertions": [{"kind": "forbid", "values": ["Paris"]}],
                    },
                ],
            }
        )
    )
    good, broken = folder / "replies", folder / "broken"
    for qid, (audio, text) in {"q1": (tone(0.5, 300), EGG), "q2": (tone(1.5, 500), SUNNY)}.items():
        write_audio(audio, good / f"{qid}.wav")
        (good / f"{qid}.txt").write_text(text)
    write_audio(tone(0.5, 300), broken / "q1.wav")
    (broken / "q1.txt").write_text(EGG)
    with FakeOpenAIServer(transcriber) as server:
        config = {
            "suite": str(suite),
            "systems": [
                {"name": "recorded", "type": "replay", "folder": str(good)},
                {"name": "broken", "type": "replay", "folder": str(broken)},
            ],
            "asr": {"provider": "openai", "base_url": server.url},
            "metrics": ["assertions", "wer", "duration"],
            "build": {"profiles": 1, "conditions": ["clean"]},
            "cache_dir": str(folder / "cache"),
        }
        path = folder / "single.yaml"
        path.write_text(yaml.safe_dump(config))
        _run(path, folder / "single-run")
    return folder / "single-run"


def live_text_run(folder: Path) -> Path:
    """8 text-mode calls: systems good/wrong x 2 scenarios x 2 conditions."""
    config = write_live_config(folder / "live-text", trials=1)
    _run(config, folder / "live-run")
    return folder / "live-run"


def live_audio_run(folder: Path, *, embedded_asr: bool = False) -> Path:
    """One recorded audio call of the wrong agent (espeak voices); the caller hears through
    a loopback ASR, or through the embedded Whisper tiny.en with ``embedded_asr`` (the docs'
    screenshots: real transcripts, needs the model packages)."""
    with FakeOpenAIServer(transcriber) as server:
        asr = (
            {"provider": "whisper-tiny-en"}
            if embedded_asr
            else {"provider": "openai", "base_url": server.url}
        )
        config = write_live_config(
            folder / "live-audio",
            trials=1,
            perturbations=[],
            # fixed tool arguments: the loopback ASR hears every turn as the same sentence
            systems=[
                {
                    "name": "wrong",
                    "type": "scripted",
                    "script": "wrong",
                    "listen": False,
                }
            ],
            asr=asr,
            simulation={
                "caller": "scripted",
                "mode": "audio",
                "caller_voice": "espeak:en-us",
                "agent_voice": "espeak:en-gb",
                "caller_asr": asr,
                "latency_model": {"agent": {"kind": "fixed", "ms": 700}},
            },
        )
        _run(config, folder / "audio-run", "--limit", "1")
    return folder / "audio-run"


def multi_turn_run(folder: Path) -> Path:
    """tests/protocols/test_multi_turn's run: 3 two-turn dialogues answered by a live HTTP
    system and a replay system, judged by a loopback judge against rubric criteria."""
    from tests.protocols.test_multi_turn import World
    from tests.protocols.test_multi_turn import write_config as write_dialogue_config

    with FakeOpenAIServer(World()) as server:
        config = write_dialogue_config(folder / "dialogues", server.url)
        _run(config, folder / "dialogue-run")
    return folder / "dialogue-run"
