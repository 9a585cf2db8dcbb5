"""Shared fixtures of the audio-judge tests: recorded tracks of synthetic tones (the judge is
scripted, so what the audio says does not matter, only which turn's clip was sent), a loopback
audio judge and readers of what its requests carried."""

from __future__ import annotations

import base64
import json
from typing import Any

import numpy as np

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from voxeval.audio import Audio, audio_from_bytes
from voxeval.providers import create_provider
from voxeval.scoring.judge import Judge
from voxeval.scoring.replies.reply_record import ScoringResources
from voxeval.simulation.timeline import SpeakerSegment

RATE = 16000
PAD_S = 0.15  # the margin speech_fidelity.turn_audio keeps around a turn
FAST = {"timeout_s": 2.0, "max_retries": 0, "backoff_base_s": 0.001, "backoff_max_s": 0.002}


def track(segments: list[SpeakerSegment], speaker: str, length_s: float) -> Audio:
    """Silence with a tone wherever ``speaker`` speaks, a different pitch per turn."""
    samples = np.zeros(round(length_s * RATE), np.float32)
    for seg in segments:
        if seg.speaker != speaker:
            continue
        a, b = round(seg.start * RATE), round(seg.end * RATE)
        t = np.arange(b - a) / RATE
        samples[a:b] = 0.3 * np.sin(2 * np.pi * (220 + 40 * seg.turn) * t)
    return Audio(samples, RATE, f"<{speaker} track>")


def clip_seconds(start: float, end: float) -> float:
    """The duration of the clip the metric cuts for a turn spanning ``start``-``end``."""
    return end + PAD_S - max(0.0, start - PAD_S)


def audio_resources(server: FakeOpenAIServer, max_attempts: int = 3) -> ScoringResources:
    spec = {"provider": "openai", "base_url": server.url, "model": "audio-judge", **FAST}
    llm = create_provider("audio_llm", {**spec, "schema_retries": 0})
    return ScoringResources(
        audio_judge=lambda: Judge(llm, modality="audio", max_attempts=max_attempts)
    )


def answer(obj: Any) -> FakeResponse:
    return chat_text(json.dumps(obj))


def sent_prompt(server: FakeOpenAIServer, n: int) -> str:
    """The text of request ``n``: the system message and the user message's text part."""
    system, user = server.posts("/chat/completions")[n].body["messages"][:2]
    text = next(p["text"] for p in user["content"] if p["type"] == "text")
    return f"{system['content']}\n{text}"


def sent_audio(server: FakeOpenAIServer, n: int) -> Audio:
    """The WAV that request ``n`` carried as its ``input_audio`` part."""
    user = server.posts("/chat/completions")[n].body["messages"][1]
    (part,) = [p for p in user["content"] if p["type"] == "input_audio"]
    assert part["input_audio"]["format"] == "wav"
    return audio_from_bytes(base64.b64decode(part["input_audio"]["data"]))
