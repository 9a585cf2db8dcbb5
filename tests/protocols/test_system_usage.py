"""Audio seconds of a cascade unit: its embedded ASR heard the query, its embedded TTS spoke
the reply, each recorded per model (compared with the unit's WAV files)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from voxeval.audio import Audio, read_audio, write_audio
from voxeval.cli.main import app
from voxeval.store import RunStore


def respond(path: str, body: Any) -> FakeResponse:
    return chat_text("Boil it for eight minutes.", prompt_tokens=40, completion_tokens=7)


@pytest.mark.models
def test_cascade_unit_records_the_audio_its_asr_heard_and_its_tts_spoke(tmp_path: Path) -> None:
    t = np.arange(16000) / 16000
    write_audio(
        Audio((0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), 16000),
        tmp_path / "suite" / "q1.wav",
    )
    suite = {
        "name": "one",
        "protocol": "single_turn",
        "queries": [{"id": "q1", "text": "How long do I boil an egg?", "category": "SR",
                     "audio": "q1.wav", "checklist": ["Gives 6-10 minutes"]}],
    }  # fmt: skip
    (tmp_path / "suite" / "suite.yaml").write_text(yaml.safe_dump(suite))
    with FakeOpenAIServer(respond) as server:
        config = {
            "suite": str(tmp_path / "suite"),
            "systems": [
                {
                    "name": "cascade",
                    "type": "cascade",
                    "asr": {"provider": "whisper-tiny-en"},
                    "llm": {"provider": "openai", "base_url": server.url, "model": "tiny-llm"},
                    "tts": {"provider": "piper"},
                }
            ],
            "metrics": ["duration"],
            "build": {"profiles": 1, "conditions": ["clean"]},
            "cache_dir": str(tmp_path / "cache"),
        }
        (tmp_path / "run.yaml").write_text(yaml.safe_dump(config))
        out = tmp_path / "out"
        result = CliRunner().invoke(app, ["run", str(tmp_path / "run.yaml"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    store = RunStore(out)
    rows = {(r["component"], r["kind"], r["provider"]): r for r in store.usage.model_rows()}
    unit_dir = next((out / "items").glob("q1__*/cascade/0"))
    heard = read_audio(unit_dir / "user.wav").duration
    spoke = read_audio(unit_dir / "assistant.wav").duration
    asr = rows[("system:cascade", "asr", "whisper-tiny-en")]
    tts = rows[("system:cascade", "tts", "piper")]
    llm = rows[("system:cascade", "llm", "openai")]
    assert asr["audio_in_s"] == pytest.approx(heard, abs=1e-3) and asr["calls"] == 1
    assert tts["audio_out_s"] == pytest.approx(spoke, abs=1e-3) and spoke > 0.5
    assert (llm["model"], llm["prompt_tokens"], llm["completion_tokens"]) == ("tiny-llm", 40, 7)
    assert llm["requests"] == 1 and asr["requests"] == 0
    usage = store.usage.summary()
    component = usage["by_provider"]["system:cascade"]
    assert component["audio_in_s"] == pytest.approx(heard, abs=1e-3)
    assert component["audio_out_s"] == pytest.approx(spoke, abs=1e-3)
    assert usage["by_model"]["tts:piper"]["audio_out_s"] == pytest.approx(spoke, abs=1e-3)
    store.close()
