"""``voxeval run`` with openai-audio systems on 127.0.0.1: replies in the vLLM-Omni shape (text
in choices[0], WAV or raw PCM16 audio in choices[1]) and in OpenAI's shape are scored; a
server that answers in text only gives failed units (``no_audio`` system faults) and exit 1,
never "done" with every metric not run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import (
    FakeOpenAIServer,
    FakeResponse,
    chat_audio,
    chat_omni_audio,
    chat_text,
)
from tests.support.query_clips import QUERY_SECONDS
from voxeval.audio import Audio, audio_to_pcm16, audio_to_wav_bytes, write_audio

ANSWER = "It opens at nine."
ITEMS = ("q1", "q2")
SECONDS = {"omni": 0.8, "omni-pcm": 0.6, "gpt": 0.5}


def tone(seconds: float, hz: float, rate: int = 16000) -> Audio:
    t = np.arange(int(rate * seconds)) / rate
    return Audio((0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32), rate)


def responder(path: str, body: Any) -> FakeResponse:
    """``/omni``: vLLM-Omni with WAV; ``/omni-pcm``: vLLM-Omni with headerless 24 kHz PCM16;
    ``/gpt``: OpenAI's message.audio; ``/mute``: text only. The scoring ASR hears the answer;
    the judge gives 8 to it."""
    if path.endswith("/audio/transcriptions"):
        return FakeResponse(json_body={"text": ANSWER})
    if "/omni/" in path:
        return chat_omni_audio(ANSWER, audio_to_wav_bytes(tone(SECONDS["omni"], 300)))
    if "/omni-pcm/" in path:
        pcm = audio_to_pcm16(tone(SECONDS["omni-pcm"], 300, 24000), 24000)
        return chat_omni_audio(ANSWER, pcm, audio_format="pcm16")
    if "/gpt/" in path:
        return chat_audio(ANSWER, audio_to_wav_bytes(tone(SECONDS["gpt"], 300)))
    if "/mute/" in path:
        return chat_text("I can only type: it opens at nine.")
    return chat_text("Score: 8")  # the judge


def write_config(tmp_path: Path, url: str) -> Path:
    queries = []
    for n, qid in enumerate(ITEMS):
        write_audio(tone(QUERY_SECONDS, 200 + 40 * n), tmp_path / "suite" / f"{qid}.wav")
        queries.append(
            {"id": qid, "text": "When does the shop open?", "category": "II",
             "audio": f"{qid}.wav", "checklist": ["Gives the opening time"]}
        )  # fmt: skip
    suite = {"name": "two", "protocol": "single_turn", "queries": queries}
    (tmp_path / "suite" / "suite.yaml").write_text(yaml.safe_dump(suite))
    systems = [
        {"name": name, "type": "openai-audio", "provider": "openai",
         "base_url": f"{url}/{name}", "model": "omni", "max_retries": 0}
        for name in ("omni", "omni-pcm", "gpt", "mute")
    ]  # fmt: skip
    config = {
        "suite": str(tmp_path / "suite"),
        "systems": systems,
        "judge": {"provider": "openai", "base_url": url, "model": "judge", "max_retries": 0},
        "asr": {"provider": "openai", "base_url": url},
        "metrics": ["checklist", "wer", "duration"],
        "build": {"profiles": 1, "conditions": ["clean"]},
        "cache_dir": str(tmp_path / "cache"),
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture
def server() -> Any:
    with FakeOpenAIServer(responder) as running:
        yield running


@pytest.mark.models
def test_audio_replies_are_scored_wherever_the_server_puts_them(tmp_path, server) -> None:
    from voxeval.cli.main import app

    out = tmp_path / "out"
    result = CliRunner().invoke(
        app, ["run", str(write_config(tmp_path, server.url)), "--out", str(out)]
    )
    assert result.exit_code == 1, result.output  # the mute system failed every unit
    systems = json.loads((out / "report" / "summary.json").read_text())["systems"]
    for name in ("omni", "omni-pcm", "gpt"):
        overall = systems[name]["overall"]
        assert systems[name]["units"]["system_faults"] == {}, name
        assert overall["duration"]["n"] == len(ITEMS), name
        assert overall["duration"]["mean"] == pytest.approx(SECONDS[name], abs=1e-3), name
        # the scoring ASR hears exactly the text channel
        assert overall["wer"]["n"] == len(ITEMS) and overall["wer"]["mean"] == 0.0, name
        assert overall["checklist"]["mean"] == pytest.approx(8.0), name
        unit = next((out / "items").glob(f"q1__*/{name}/0"))
        assert json.loads((unit / "reply.json").read_text())["text"] == ANSWER

    mute = systems["mute"]
    assert mute["units"]["system_faults"] == {"no_audio": len(ITEMS)}
    # the failure's scores: the scale minimum, every word missing from the speech
    assert mute["overall"]["checklist"]["mean"] == pytest.approx(1.0)
    assert mute["overall"]["wer"]["mean"] == 1.0 and mute["overall"]["wer"]["n"] == len(ITEMS)
    unit = next((out / "items").glob("q1__*/mute/0"))
    fault = json.loads((unit / "reply.json").read_text())["system_fault"]
    assert fault["cause"] == "no_audio" and "without audio" in fault["message"]
    assert not (unit / "assistant.wav").exists()
