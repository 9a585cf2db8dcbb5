"""The audio set through a loopback audio judge: a judge that compares what it hears with the
intended text gets accuracy 1; one that always says "faithful" gets the clean share and
kappa 0. The speech is a tone whose pitch depends on the text, so the scripted judge can
'hear' whether the audio is the intended text."""

from __future__ import annotations

import base64
import io
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import soundfile

from tests.calibration.test_speech_defects import tone_render
from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from voxeval.calibration.calibrate import calibrate, plan_metrics
from voxeval.providers import create_provider
from voxeval.scoring.judge import Judge

FAST = {"timeout_s": 5.0, "max_retries": 0, "backoff_base_s": 0.001, "schema_retries": 0}


def heard_pitch(body: Any) -> float:
    parts = body["messages"][1]["content"]
    wav = next(p for p in parts if p.get("type") == "input_audio")["input_audio"]["data"]
    samples, rate = soundfile.read(io.BytesIO(base64.b64decode(wav)), dtype="float32")
    spectrum = np.abs(np.fft.rfft(samples))
    return float(np.fft.rfftfreq(len(samples), 1 / rate)[int(np.argmax(spectrum))])


def intended_pitch(body: Any) -> float:
    parts = body["messages"][1]["content"]
    prompt = next(p for p in parts if p.get("type") == "text")["text"]
    text = re.search(r"\[intended\]\n(.*?)\n\[/intended\]", prompt, re.S).group(1)  # type: ignore[union-attr]
    return heard_pitch(
        {"messages": [{}, {"content": [{"type": "input_audio", "input_audio": _wav(text)}]}]}
    )


def _wav(text: str) -> dict[str, str]:
    audio = tone_render(text)
    buffer = io.BytesIO()
    soundfile.write(buffer, audio.samples, audio.rate, format="WAV")
    return {"data": base64.b64encode(buffer.getvalue()).decode("ascii"), "format": "wav"}


def listening_judge(path: str, body: Any) -> FakeResponse:
    same = abs(heard_pitch(body) - intended_pitch(body)) < 3.0
    answer = {"transcript": "...", "verdict": int(same), "evidence": "compared"}
    return chat_text(json.dumps(answer))


def always_faithful(path: str, body: Any) -> FakeResponse:
    return chat_text(json.dumps({"transcript": "...", "verdict": 1, "evidence": "ok"}))


@pytest.fixture
def judges() -> Iterator[Callable[[Callable[[str, Any], FakeResponse]], tuple[Judge, Judge]]]:
    servers: list[FakeOpenAIServer] = []

    def make(responder: Callable[[str, Any], FakeResponse]) -> tuple[Judge, Judge]:
        server = FakeOpenAIServer(responder).start()
        servers.append(server)
        spec = {"provider": "openai", "base_url": server.url, "model": "judge", **FAST}
        text = Judge(create_provider("llm", spec))
        audio = Judge(create_provider("audio_llm", spec), modality="audio")
        return text, audio

    yield make
    for server in servers:
        server.stop()


@pytest.mark.parametrize(
    ("responder", "accuracy", "kappa"),
    [(listening_judge, 1.0, 1.0), (always_faithful, 0.5, 0.0)],
    ids=["listening", "always-faithful"],
)
def test_the_audio_set_against_a_loopback_audio_judge(
    judges: Any, responder: Any, accuracy: float, kappa: float
) -> None:
    text_judge, audio_judge = judges(responder)
    plan = plan_metrics(["agent_speech_fidelity"], audio_judge=True)
    result = calibrate(
        plan,
        text_judge,
        audio_judge,
        per_defect=2,
        min_items=1,
        seed=1,
        concurrency=2,
        render=tone_render,
    )
    stats = result.report["metrics"]["agent_speech_fidelity"]
    assert stats["judge_failures"] == 0, stats["failures"]
    assert stats["n"] == 4 and stats["base_rate"] == 0.5
    assert stats["accuracy"] == accuracy and stats["kappa"] == pytest.approx(kappa)
