"""A tiny replica of the public MTalk-Bench GitHub repository as shipped: ``data/sample.json``
with the same keys, dialogue (record 1-1 in each of the three dimensions, 2 turns), the same
7 models and the same relative audio paths, none of whose folders exist; and the repository's
``static/audio/`` holding the question recordings flat under their file names (22.05 kHz, as
there), plus recordings of other dialogues that sample.json does not use. The words are the
test's own; only the layout follows the repository."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

STATIC_RATE = 22_050
DIMENSIONS = {  # sample.json key -> file code, in the file's order
    "Paralinguistic information": "para",
    "Semantic information": "sem",
    "Ambient sound": "amb",
}
# model -> its reply path pattern in sample.json ({n}: turn, {c}: dimension code)
MODEL_PATHS = {
    "GLM4-Voice": "./model_output/GLM4_Voice/scene1/record_1-1/1-1-turn{n}_{c}_answer.wav",
    "GPT-4o": "./model_output/GPT4o/scene1/record_1-1/1-1-turn{n}_{c}_answer.wav",
    "MiniCPM-o": "./model_output/minicpm/result/scene1/record_1-1/response_for_1-1-turn{n}_{c}.wav",
    "Qwen-Omni": "./model_output/qwen2.5-omni-7b/1-1-turn{n}_{c}_answer.wav",
    "VITA": "./model_output/vita/result/scene1/record_1-1/response_for_1-1-turn{n}_{c}.wav",
    "Moshi": "./model_output/Moshi/{c}/Moshi_answer_1-1-turn{n}_{c}.wav",
    "Doubao": "./model_output/Doubao/{c}/Doubao_answer_1-1-turn{n}_{c}.wav",
}
MODELS = tuple(MODEL_PATHS)


def _recording(path: Path, freq: float) -> None:
    t = np.arange(int(STATIC_RATE * 0.25)) / STATIC_RATE
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(path, (0.2 * np.sin(2 * np.pi * freq * t)).astype(np.float32), STATIC_RATE)


def _reply_path(model: str, code: str, n: int) -> str:
    path = MODEL_PATHS[model].format(n=n, c=code)
    # as in the repository: Doubao's semantic replies are spelled in lower case
    return path.replace("Doubao_answer", "doubao_answer") if code == "sem" else path


def _turn(code: str, n: int) -> dict[str, Any]:
    return {
        "question": f"./audio_new/scene1/record_1-1/1-1-turn{n}_{code}.wav",
        "dialogue": {m: _reply_path(m, code, n) for m in MODELS},
        "question_transcription": f"plan a family barbecue, {code} turn {n}",
        "dialogue_transcription": {m: f"{m} answers {code} turn {n}" for m in MODELS},
    }


def write_public_repo(root: Path) -> Path:
    """The repository under ``root``; returns ``root / "data" / "sample.json"``."""
    data = {key: [[_turn(code, 1), _turn(code, 2)]] for key, code in DIMENSIONS.items()}
    sample = root / "data" / "sample.json"
    sample.parent.mkdir(parents=True, exist_ok=True)
    sample.write_text(json.dumps(data, indent=2), encoding="utf-8")
    freq = 200.0
    for number in ("1-1", "1-4", "1-10"):  # 1-4 and 1-10 are not in sample.json
        for code in DIMENSIONS.values():
            for n in (1, 2):
                _recording(root / "static" / "audio" / f"{number}-turn{n}_{code}.wav", freq)
                freq += 15
    return sample
