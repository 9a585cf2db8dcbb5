"""Tiny finished runs made by ``voxeval run`` for the study tests: a multi-turn run with three
replay systems (no judge: nothing but stored replies is needed) and a single-turn run with two
replay systems."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeResponse, chat_text
from voxeval.audio import Audio, write_audio
from voxeval.cli.main import app

DIALOGUES = {"d1": ("semantic", "understanding-memory"), "d2": ("ambient", None)}
SYSTEMS = {"alpha": 500.0, "beta": 600.0, "gamma": 700.0}


def tone(seconds: float, hz: float, rate: int = 16000) -> Audio:
    t = np.arange(int(rate * seconds)) / rate
    return Audio((0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32), rate)


def _suite(root: Path) -> Path:
    rows = []
    for n, (did, (dimension, tier1)) in enumerate(DIALOGUES.items()):
        turns = []
        for k in (1, 2):
            audio = root / "suite" / "audio" / f"{did}_{k}.wav"
            write_audio(tone(0.4 + 0.1 * k, 200 + 40 * n + 10 * k), audio)
            turns.append(
                {"transcript": f"<calm tone> {did} turn {k}", "audio": f"audio/{audio.name}"}
            )
        row: dict[str, Any] = {
            "id": did,
            "dimension": dimension,
            "turns": turns,
            "rubrics": {
                "general": [{"id": "criteria_s_1", "text": "Is it coherent?"}],
                "sample": [
                    {"id": "criteria_d_1", "text": "Does it answer?"},
                    {"id": "criteria_d_2", "text": "Draft", "status": "rejected"},
                ],
            },
        }
        if tier1:
            row["capability"] = {"tier1": tier1}
        rows.append(row)
    (root / "suite" / "dialogues.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    header = {"name": "tiny", "protocol": "multi_turn", "dialogues": "dialogues.jsonl"}
    (root / "suite" / "suite.yaml").write_text(yaml.safe_dump(header))
    return root / "suite"


def _replay(root: Path, system: str, hz: float) -> Path:
    lines = []
    for n, did in enumerate(DIALOGUES):
        for k in (1, 2):
            item = f"{did}.turn{k}"
            write_audio(tone(0.2 + 0.1 * n + 0.05 * k, hz), root / system / f"{item}.wav")
            lines.append(json.dumps({"item_id": item, "audio": f"{item}.wav", "text": system}))
    manifest = root / system / "replies.jsonl"
    manifest.write_text("\n".join(lines) + "\n")
    return manifest


def multi_turn_run(
    root: Path, judge_url: str | None = None, extra_systems: list[dict[str, Any]] | None = None
) -> Path:
    """With ``judge_url`` (a loopback ``PreferenceJudge``) the run also has rubric verdicts
    and the arena; ``extra_systems`` join the three replay systems."""
    config: dict[str, Any] = {
        "suite": str(_suite(root)),
        "systems": [
            {"name": name, "type": "replay", "manifest": str(_replay(root, name, hz))}
            for name, hz in SYSTEMS.items()
        ]
        + list(extra_systems or []),
        "metrics": [],
        "cache_dir": str(root / "cache"),
    }
    if judge_url:
        config["judge"] = {"provider": "openai", "base_url": judge_url, "model": "judge"}
        config["metrics"] = ["rubric"]
    path = root / "run.yaml"
    path.write_text(yaml.safe_dump(config))
    out = root / "run"
    tolerated = ["--max-failures", "5"] if extra_systems else []  # faults of the system
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(out), *tolerated])
    assert result.exit_code == 0, result.output
    return out


PREFERENCE = {"gamma": 3, "beta": 2, "alpha": 1}


class PreferenceJudge:
    """Loopback LLM judge: the arena prefers gamma > beta > alpha (each reply's text is its
    system's name); the rubric is met by gamma always, by beta on general criteria only,
    never by alpha."""

    def __call__(self, path: str, body: Any) -> FakeResponse:
        system, prompt = body["messages"][0]["content"], body["messages"][1]["content"]
        if system.startswith("You compare two spoken dialogue systems"):
            a, b = (
                re.search(rf"=== Dialogue with model {x} ===(.*?)(?====|\Z)", prompt, re.S)
                for x in ("A", "B")
            )
            assert a and b
            score_a = max(v for k, v in PREFERENCE.items() if k in a.group(1))
            score_b = max(v for k, v in PREFERENCE.items() if k in b.group(1))
            winner = "A" if score_a > score_b else "B"
            return chat_text(json.dumps({"winner": winner, "reason": "preferred"}))
        ids = re.findall(r"^\s+(criteria_[smd]_\d+):", prompt, re.M)
        who = next(name for name in PREFERENCE if name in prompt)
        met = {
            cid: int(who == "gamma" or (who == "beta" and cid.startswith("criteria_s_")))
            for cid in ids
        }
        return chat_text(json.dumps(met))


QUERIES = {"q1": "How long do I boil an egg?", "q2": "What's the weather like?"}


def single_turn_run(root: Path) -> Path:
    for n, qid in enumerate(QUERIES):
        write_audio(tone(0.8, 200 + 60 * n, rate=22050), root / "suite1" / f"{qid}.wav")
    suite = {
        "name": "two",
        "protocol": "single_turn",
        "queries": [
            {"id": qid, "text": text, "category": "SR", "audio": f"{qid}.wav",
             "checklist": [f"Answers {qid}", "Is polite"]}
            for qid, text in QUERIES.items()
        ],
    }  # fmt: skip
    (root / "suite1" / "suite.yaml").write_text(yaml.safe_dump(suite))
    systems = []
    for name, hz, seconds in (("alpha", 500.0, 0.5), ("beta", 650.0, 1.0)):
        folder = root / f"replies-{name}"
        for qid in QUERIES:
            write_audio(tone(seconds, hz), folder / f"{qid}.wav")
            (folder / f"{qid}.txt").write_text(f"{name} answers {qid}")
        systems.append({"name": name, "type": "replay", "folder": str(folder)})
    config: dict[str, Any] = {
        "suite": str(root / "suite1"),
        "systems": systems,
        "metrics": ["duration"],
        "build": {"profiles": 1, "conditions": ["clean"]},
        "cache_dir": str(root / "cache"),
    }
    path = root / "run1.yaml"
    path.write_text(yaml.safe_dump(config))
    out = root / "run1"
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out
