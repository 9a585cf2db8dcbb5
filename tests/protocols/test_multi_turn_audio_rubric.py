"""Rubrics judged from audio (``scoring.rubric.mode: audio``): the audio judge hears each
dialogue as the reference lays it out (per turn the cue "Turn N", the user's recording, the
cue "Model's response", the reply) instead of reading its transcript. A release in the
dataset layout is imported and run with a loopback OpenAI-compatible audio judge, which
checks every request carries the dialogue's audio."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf
import yaml
from typer.testing import CliRunner

from tests.benchmarks.mtalk_fixtures import write_dataset_jsonl
from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from voxeval.cli.main import app

runner = CliRunner()


def peak_hz(samples: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(samples.size)))
    return float(np.fft.rfftfreq(samples.size, 1 / rate)[int(np.argmax(spectrum))])


def audio_judge(path: str, body: dict[str, Any]) -> FakeResponse:
    """Every criterion met for GPT-4o, only the general ones for Qwen-Omni; the system under
    judgement is told by the reply tones it hears (GPT-4o's replies are 215 and 260 Hz)."""
    text, sound = body["messages"][1]["content"]
    assert sound["type"] == "input_audio" and sound["input_audio"]["format"] == "wav"
    ids = re.findall(r"^\s+(criteria_[smd]_\d+):", text["text"], re.M)
    samples, rate = sf.read(io.BytesIO(base64.b64decode(sound["input_audio"]["data"])))
    heard = np.abs(np.fft.rfft(samples))
    freqs = np.fft.rfftfreq(samples.size, 1 / rate)
    band = lambda hz: heard[(freqs > hz - 3) & (freqs < hz + 3)].max()  # noqa: E731
    gpt = band(215) > band(230)
    answer = {cid: int(gpt or cid.startswith("criteria_s_")) for cid in ids}
    return chat_text(json.dumps(answer))


@pytest.mark.models
def test_rubrics_from_the_dialogue_audio(tmp_path: Path) -> None:
    release = write_dataset_jsonl(tmp_path / "release")
    suite = tmp_path / "suite"
    imported = runner.invoke(app, ["mtalk-suite", str(release), "-o", str(suite)])
    assert imported.exit_code == 0, imported.output
    snippet = yaml.safe_load((suite / "systems.yaml").read_text(encoding="utf-8"))
    with FakeOpenAIServer(audio_judge) as server:
        config = {
            "suite": ".",
            **snippet,
            "audio_judge": {"provider": "openai", "base_url": server.url, "model": "hears"},
            "scoring": {"rubric": {"mode": "audio"}},
            "metrics": ["rubric"],
            "comparisons": [],
            "cache_dir": str(tmp_path / "cache"),
        }
        (suite / "run.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        out = tmp_path / "run"
        result = runner.invoke(app, ["run", str(suite / "run.yaml"), "--out", str(out)])
        requests = server.posts("/chat/completions")
    # amb-9-1 has no released replies: those units fail on our side (exit 1), as without audio
    assert result.exit_code == 1, result.output
    assert len(requests) == 2  # para-2-3 for each model, one call each
    for request in requests:
        text = request.body["messages"][1]["content"][0]["text"]
        assert "GPT-4o reply" not in text and "Qwen-Omni reply" not in text  # no transcript
    summary = json.loads((out / "report" / "summary.json").read_text(encoding="utf-8"))
    gpt, qwen = summary["systems"]["GPT-4o"], summary["systems"]["Qwen-Omni"]
    assert gpt["rubric"]["model_score"]["mean"] == pytest.approx(100.0)
    assert qwen["rubric"]["model_score"]["mean"] == pytest.approx(100 * 2 / 5)
    scores = json.loads(
        (out / "items" / "para-2-3" / "Qwen-Omni" / "0" / "scores.json").read_text()
    )
    assert scores["rubric"]["details"]["judged_from"] == "audio"
    assert scores["rubric"]["details"]["judge"]["modality"] == "audio"

    # what the judge heard: 2 turns x (cue, user, cue, reply), a second of silence between
    unit = out / "items" / "para-2-3" / "Qwen-Omni" / "0"
    layout = json.loads((unit / "rubric_audio.t2.json").read_text())["segments"]
    assert [s["segment"] for s in layout] == [
        "cue: turn 1", "turn 1 user", "cue: turn 1 response", "turn 1 reply",
        "cue: turn 2", "turn 2 user", "cue: turn 2 response", "turn 2 reply",
    ]  # fmt: skip
    samples, rate = sf.read(unit / "rubric_audio.t2.wav")
    tones = {"turn 1 user": 200, "turn 1 reply": 230, "turn 2 user": 245, "turn 2 reply": 275}
    for name, hz in tones.items():
        seg = next(s for s in layout if s["segment"] == name)
        part = samples[round(seg["start_s"] * rate) : round(seg["end_s"] * rate)]
        assert peak_hz(part, rate) == pytest.approx(hz, abs=6)
    # the judge had no transcript to read: no warning about untagged cues, which the text
    # mode would give for this paralinguistic dialogue only if it had no tags (it has)
    assert "warnings" not in qwen["judge"]
    markdown = (out / "report" / "summary.md").read_text(encoding="utf-8")
    assert "judged from audio" in markdown


def test_audio_mode_without_an_audio_judge_is_not_run(tmp_path: Path) -> None:
    release = write_dataset_jsonl(tmp_path / "release")
    suite = tmp_path / "suite"
    assert runner.invoke(app, ["mtalk-suite", str(release), "-o", str(suite)]).exit_code == 0
    snippet = yaml.safe_load((suite / "systems.yaml").read_text(encoding="utf-8"))
    config = {
        "suite": ".",
        **snippet,
        "scoring": {"rubric": {"mode": "audio"}},
        "metrics": ["rubric"],
        "comparisons": [],
        "cache_dir": str(tmp_path / "cache"),
    }
    (suite / "run.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    out = tmp_path / "run"
    runner.invoke(app, ["run", str(suite / "run.yaml"), "--out", str(out)])
    summary = json.loads((out / "report" / "summary.json").read_text(encoding="utf-8"))
    assert "audio judge" in summary["systems"]["GPT-4o"]["not_run"]["rubric"]
