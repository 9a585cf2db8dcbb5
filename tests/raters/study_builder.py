"""Tiny real study folders for the rater app tests: 0.3-s tone WAVs and a few items."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from voxeval.raters.study.study_files import StudyConfig, StudyItem, write_study

CLIP_S = 0.3
RATE = 16000


def write_tone(path: Path, hz: float, seconds: float = CLIP_S, rate: int = RATE) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    t = np.arange(int(seconds * rate)) / rate
    sf.write(str(path), (0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32), rate)


def _stimuli(
    study_dir: Path, item_id: str, task: str, clip_s: float = CLIP_S
) -> list[dict[str, Any]]:
    roles = {
        "arena": [("u1", "user", 1), ("a1", "a", 1), ("b1", "b", 1)],
        "rubric": [("u1", "user", 1), ("r1", "reply", 1)],
        "score": [("q", "query", None), ("r", "reply", None)],
        "record": [],
    }[task]
    stimuli = []
    for number, (sid, role, turn) in enumerate(roles):
        relative = f"audio/{item_id}/{sid}.wav"
        write_tone(study_dir / relative, 300 + 100 * number, clip_s)
        stimuli.append(
            {"id": sid, "role": role, "turn": turn, "path": relative, "duration_s": clip_s}
        )
    return stimuli


def make_study(
    study_dir: Path,
    task: str = "arena",
    *,
    items: int = 3,
    gold: int = 0,
    clip_s: float = CLIP_S,
    **settings: Any,
) -> Path:
    """A study folder with ``items`` normal and ``gold`` gold items (tones of ``clip_s``
    seconds); returns the folder."""
    rows: list[StudyItem] = []
    for index in range(items + gold):
        item_id = f"{'gold' if index >= items else 'item'}-{index}"
        row: dict[str, Any] = {
            "item_id": item_id,
            "kind": "gold" if index >= items else "normal",
            "title": f"Remembers the caller's constraint <{index}>",
            "stimuli": _stimuli(study_dir, item_id, task, clip_s),
        }
        if task == "arena":
            row["systems"] = {"a": "alpha-sys", "b": "beta-sys"}
            if index >= items:
                row["gold"] = {"choice": "a"}
        elif task in ("rubric", "score"):
            row["systems"] = {"reply": "alpha-sys"}
            row["criteria"] = [{"id": "c1", "text": "Answers the question"}]
            row["checklist"] = ["names the city"]
        else:
            row["prompt_text"] = f"Please read sentence number {index}."
        rows.append(StudyItem.model_validate(row))
    config = StudyConfig.model_validate(
        {"study_id": "pilot", "task": task, "title": "Pilot study", **settings}
    )
    write_study(study_dir, config, rows)
    return study_dir


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert found, "no CSRF field on the page"
    return found.group(1)
