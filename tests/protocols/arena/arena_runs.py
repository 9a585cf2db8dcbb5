"""A real run folder whose multi-turn units are done and hold ``dialogue.json`` files the
tests write, and a loopback judge that prefers replies containing "good"."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.fakes.openai_server import FakeResponse, chat_text
from voxeval.api.context import RunContext
from voxeval.config import RunConfig
from voxeval.protocols.arena.inputs import DIALOGUE_FILE
from voxeval.protocols.contract import WorkUnit
from voxeval.scoring.score import Score
from voxeval.store import RunStore

FAST = {"timeout_s": 2.0, "max_retries": 0, "backoff_base_s": 0.001, "backoff_max_s": 0.002}
USER_TURNS = ("[phone ringing] Can you hear that?", "<anxious tone> What should I do now?")


def judge_spec(url: str, model: str = "judge") -> dict[str, Any]:
    # schema_retries 0: every malformed answer reaches the Judge's own retry loop
    return {"provider": "openai", "base_url": url, "model": model, **FAST, "schema_retries": 0}


def arena_context(
    tmp_path: Path,
    replies: Mapping[tuple[str, str], list[str]],
    *,
    dimension: str = "ambient",
    judge_url: str | None = None,
    arena: dict[str, Any] | None = None,
    rubric: Mapping[tuple[str, str], float] | None = None,
    rubric_criteria: Mapping[tuple[str, str], Mapping[str, int]] | None = None,
    **config: Any,
) -> tuple[RunContext, list[WorkUnit]]:
    """Units (dialogue, system) -> reply texts, done in a run folder under ``tmp_path``; the
    systems are named in first-seen order; ``rubric`` gives units a ``rubric`` score, and
    ``rubric_criteria`` one with its per-criterion values (the score is their mean)."""
    systems = list(dict.fromkeys(system for _, system in replies))
    run_config = RunConfig(
        suite="x",
        systems=[{"name": name, "type": "scripted"} for name in systems],
        metrics=[],
        judge=judge_spec(judge_url) if judge_url else None,
        scoring={"arena": arena or {}},
        cache_dir=str(tmp_path / "cache"),
        **config,
    )
    store = RunStore(tmp_path / "run")
    units = []
    for (dialogue, system), texts in replies.items():
        unit = WorkUnit(dialogue, system, 0, "clean", dimension)
        write_dialogue(store.folder.unit_dir(unit), unit, texts)
        scores = {}
        if rubric and (dialogue, system) in rubric:
            scores["rubric"] = Score(value=rubric[(dialogue, system)])
        if rubric_criteria and (dialogue, system) in rubric_criteria:
            values = dict(rubric_criteria[(dialogue, system)])
            scores["rubric"] = Score(
                value=sum(values.values()) / len(values), details={"criteria": values}
            )
        store.units.complete(unit, scores)
        units.append(unit)
    return RunContext(config=run_config, store=store, seed=run_config.seed), units


def write_dialogue(
    folder: Path,
    unit: WorkUnit,
    texts: list[str],
    *,
    user_audio: list[str | None] | None = None,
    reply_audio: list[str | None] | None = None,
) -> None:
    turns = [
        {
            "index": n + 1,
            "user_text": USER_TURNS[n % len(USER_TURNS)],
            "user_audio": (user_audio or [None] * len(texts))[n],
            "reply_text": text,
            "reply_audio": (reply_audio or [None] * len(texts))[n],
            "reply_duration_s": 0.5 * len(text.split()),
            "timing": {},
        }
        for n, text in enumerate(texts)
    ]
    folder.mkdir(parents=True, exist_ok=True)
    document = {
        "dialogue": unit.item_id,
        "system": unit.system,
        "trial": unit.trial,
        "dimension": unit.category,
        "turns": turns,
    }
    (folder / DIALOGUE_FILE).write_text(json.dumps(document), encoding="utf-8")


def _side(text: str, label: str) -> str:
    match = re.search(rf"=== Dialogue with model {label} ===(.*?)(?====|\Z)", text, re.S)
    assert match, f"no dialogue {label} in the prompt"
    return match.group(1)


def shown_sides(body: dict[str, Any]) -> tuple[str, str]:
    """The transcripts of model A and model B in a judge request."""
    user = body["messages"][1]["content"]
    return _side(user, "A"), _side(user, "B")


def preferring_judge(path: str, body: dict[str, Any]) -> FakeResponse:
    """Prefers the side whose replies say "good"; both good: tie; both not: always A (a
    position-biased judge, so the two orders disagree)."""
    a, b = shown_sides(body)
    good_a, good_b = "good" in a, "good" in b
    verdicts = {(True, False): "A", (False, True): "B", (True, True): "tie", (False, False): "A"}
    winner = verdicts[(good_a, good_b)]
    return chat_text(json.dumps({"winner": winner, "reason": f"{winner} helped more"}))
