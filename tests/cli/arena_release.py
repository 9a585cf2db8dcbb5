"""A released MTalk-Bench model-outputs file with many one-turn semantic dialogues, written by
the tests (tiny tones for every recording), and a ``voxeval run`` of it with a loopback judge."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from tests.benchmarks.mtalk_fixtures import write_wav
from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse
from voxeval.cli.main import app

runner = CliRunner()


def write_release(root: Path, models: Sequence[str], dialogues: int) -> Path:
    """``sample.json`` with ``dialogues`` one-turn semantic dialogues (number ``S-n``) that
    every model answered; each reply's transcript is ``reply of MODEL to NUMBER``."""
    rows = []
    for n in range(dialogues):
        number = f"{1 + n % 9}-{n + 1}"
        question = f"./audio_new/scene{number.split('-')[0]}/record_{number}/{number}-turn1_sem.wav"
        write_wav(root / question, 300 + n)
        answers = {}
        for index, model in enumerate(models):
            answer = f"./model_output/{model}/record_{number}/{number}-turn1_sem_answer.wav"
            write_wav(root / answer, 500 + 10 * index)
            answers[model] = answer
        rows.append(
            [
                {
                    "question": question,
                    "dialogue": answers,
                    "question_transcription": f"question {number}",
                    "dialogue_transcription": {m: f"reply of {m} to {number}" for m in models},
                }
            ]
        )
    path = root / "sample.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"Semantic information": rows}), encoding="utf-8")
    return path


def shown_models(body: dict[str, Any], models: Sequence[str]) -> tuple[str, str]:
    """The models shown as A and as B in an arena request."""
    prompt = body["messages"][1]["content"]
    a_part, b_part = prompt.split("model B", 1)
    a = next(m for m in models if f"reply of {m} to" in a_part)
    b = next(m for m in models if f"reply of {m} to" in b_part)
    return a, b


def run_release(
    tmp_path: Path,
    models: Sequence[str],
    dialogues: int,
    judge: Callable[[str, dict[str, Any]], FakeResponse],
    arena: dict[str, Any],
) -> tuple[Any, Path, int]:
    """Import the release, run it (arena only) with ``judge``; (CLI result, run folder,
    judge requests)."""
    release = write_release(tmp_path / "release", models, dialogues)
    suite = tmp_path / "suite"
    imported = runner.invoke(app, ["mtalk-suite", str(release), "-o", str(suite)])
    assert imported.exit_code == 0, imported.output
    snippet = yaml.safe_load((suite / "systems.yaml").read_text(encoding="utf-8"))
    out = tmp_path / "run"
    with FakeOpenAIServer(judge) as server:
        config = {
            "suite": ".",
            **snippet,
            "judge": {"provider": "openai", "base_url": server.url, "model": "judge"},
            "scoring": {"arena": arena},
            "cache_dir": str(tmp_path / "cache"),
        }
        (suite / "run.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        result = runner.invoke(app, ["run", str(suite / "run.yaml"), "--out", str(out)])
        requests = len(server.posts())
    return result, out, requests
