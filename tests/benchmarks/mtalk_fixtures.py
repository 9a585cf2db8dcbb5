"""Tiny MTalk-Bench releases in both reference layouts, written by the tests themselves."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

RATE = 24_000
MODELS = ("GPT-4o", "Qwen-Omni")
GENERAL_PROMPT = """You are grading a spoken dialogue. Check each criterion.
- criteria_s_1: Is the reply fluent and grammatical?
- criteria_s_2: Does the reply stay relevant to what the user asked?
- criteria_m_1: Does the reply stay consistent with the earlier turns?
Answer as JSON: {"criteria_s_1": 0 or 1, "criteria_s_2": 0 or 1, "criteria_m_1": 0 or 1}
"""
SPECIFIC_PROMPT = """Sample criteria:
"criteria_d_1": "Does the reply suggest a backup plan for bad weather?",
"criteria_d_2": "Does the final answer use bullet points as requested?"
Answer as JSON with one value per id.
"""


def tone(seconds: float = 0.2, freq: float = 440.0) -> np.ndarray:
    t = np.arange(int(RATE * seconds)) / RATE
    return (0.3 * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def write_wav(path: Path, freq: float = 440.0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    sf.write(path, tone(freq=freq), RATE, subtype="PCM_16")
    return path


def wav_bytes(freq: float) -> bytes:
    buffer = io.BytesIO()
    sf.write(buffer, tone(freq=freq), RATE, format="WAV", subtype="PCM_16")
    return buffer.getvalue()


_DIMENSIONS = {
    "Semantic information": "sem",
    "Paralinguistic information": "para",
    "Ambient sound": "amb",
}
_MODEL_DIRS = {"GPT-4o": "GPT4o", "Qwen-Omni": "qwen2.5-omni-7b"}


def _outputs_turn(root: Path, number: str, turn: int, code: str) -> dict[str, Any]:
    scene = number.split("-")[0]
    question = f"./audio_new/scene{scene}/record_{number}/{number}-turn{turn}_{code}.wav"
    write_wav(root / question, 300 + 20 * turn)
    answers = {}
    for index, model in enumerate(MODELS):
        answer = (
            f"./model_output/{_MODEL_DIRS[model]}/scene{scene}/record_{number}/"
            f"{number}-turn{turn}_{code}_answer.wav"
        )
        write_wav(root / answer, 500 + 50 * index + 10 * turn)
        answers[model] = answer
    return {
        "question": question,
        "dialogue": answers,
        "question_transcription": f"user words of {code} {number} turn {turn}",
        "dialogue_transcription": {m: f"{m} says turn {turn} of {number}" for m in MODELS},
    }


def write_model_outputs(root: Path) -> Path:
    """A ``sample.json`` with dialogue 1-1 (2 turns) in every dimension and 3-2 (3 turns) in
    the semantic one, its recordings under ``root`` at the paths the file names."""
    data: dict[str, Any] = {}
    for key, code in _DIMENSIONS.items():
        dialogues = [[_outputs_turn(root, "1-1", t, code) for t in (1, 2)]]
        if code == "sem":
            dialogues.append([_outputs_turn(root, "3-2", t, code) for t in (1, 2, 3)])
        data[key] = dialogues
    path = root / "data" / "sample.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    # the reference file lives next to its audio folders; paths are relative to its folder
    for child in ("audio_new", "model_output"):
        (root / child).rename(path.parent / child)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def dataset_rows(embed: bool, root: Path | None = None) -> list[dict[str, Any]]:
    """Rows of the dataset layout: para 2-3 (2 turns) with two models' replies, and amb 9-1
    (1 turn, question only). ``embed``: audio as {"bytes", "path"}; else paths under
    ``root``."""
    rows: list[dict[str, Any]] = []

    def audio(name: str, freq: float) -> Any:
        if embed:
            return {"bytes": wav_bytes(freq), "path": name}
        assert root is not None
        write_wav(root / "audio" / name, freq)
        return f"audio/{name}"

    # every recording has its own tone: embedded audio is stored by content
    for code, number, turns, models in (("para", "2-3", 2, MODELS), ("amb", "9-1", 1, ())):
        for turn in range(1, turns + 1):
            rows.append(
                {
                    "type": code,
                    "number": number,
                    "turn": f"turn{turn}",
                    "source": "question",
                    "audio": audio(f"{number}-turn{turn}_{code}.wav", 200 + 15 * len(rows)),
                    "transcription": f"<anxious tone> question {turn} of {number}",
                    "arena_prompt": "Compare the two dialogues and pick the better one.",
                    "rubric_prompt_general": GENERAL_PROMPT,
                    "rubric_prompt_specific": SPECIFIC_PROMPT,
                }
            )
            for model in models:
                rows.append(
                    {
                        "type": code,
                        "number": number,
                        "turn": f"turn{turn}",
                        "source": model,
                        "audio": audio(f"{model}-{number}-turn{turn}.wav", 200 + 15 * len(rows)),
                        "transcription": f"{model} reply {turn}",
                        "arena_prompt": "",
                        "rubric_prompt_general": "",
                        "rubric_prompt_specific": "",
                    }
                )
    return rows


def write_dataset_jsonl(root: Path) -> Path:
    folder = root / "dataset"
    rows = dataset_rows(embed=False, root=folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "test.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


def write_dataset_parquet(root: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = root / "parquet" / "data"
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(dataset_rows(embed=True)), folder / "test-00000.parquet")
    return folder.parent
