"""A single-turn checklist judge whose answer cannot be read leaves the checklist pending
(exit 1), never "not run"; the unreadable answer is not kept in the call cache, so once the
judge answers properly both ``voxeval score`` and a resumed ``voxeval run`` ask it again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from tests.runner.executor_world import World, run_cli, single_turn_config
from voxeval.cli.main import app

N_QUERIES = 2  # of the world's six (``limit``): each reply's language is identified by Whisper


class MumblingJudgeWorld(World):
    """The scripted world whose judge, while ``mumbling``, never ends with a score line."""

    def __init__(self) -> None:
        super().__init__()
        self.mumbling = True

    def __call__(self, path: str, body: Any) -> FakeResponse:
        if path.endswith("/chat/completions") and self.mumbling:
            return chat_text("The reply seems fine overall, I would say.")
        return super().__call__(path, body)


def checklist_scores(run: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text())["checklist"] for p in sorted(run.rglob("scores.json"))]


@pytest.mark.slow  # three runs' worth of Whisper base language identification
def test_unreadable_checklist_answers_are_pending_and_retried_by_score(tmp_path: Path) -> None:
    world = MumblingJudgeWorld()
    with FakeOpenAIServer(world) as server:
        config = single_turn_config(tmp_path, server.url, metrics=["checklist"], limit=N_QUERIES)
        first = run_cli(config, tmp_path / "run")
        sent_first = len(server.posts("/chat/completions"))
        assert first.exit_code == 1, first.output  # a pending score
        scores = checklist_scores(tmp_path / "run")
        assert len(scores) == N_QUERIES
        assert all(s["pending"] and s["value"] is None for s in scores)
        assert "no readable score" in scores[0]["error"]
        assert "Score: N" in scores[0]["error"]  # what was wrong with the answer
        assert sent_first == 3 * N_QUERIES  # three format attempts per query
        cache_entries = list((tmp_path / "cache").rglob("*.json"))
        assert not [p for p in cache_entries if "/llm/" in str(p)]  # nothing unreadable kept

        world.mumbling = False
        rescored = CliRunner().invoke(app, ["score", str(tmp_path / "run")])
        assert rescored.exit_code == 0, rescored.output
        assert len(server.posts("/chat/completions")) - sent_first == N_QUERIES
    values = [s["value"] for s in checklist_scores(tmp_path / "run")]
    assert values == [4.0 + i % 5 for i in range(N_QUERIES)]


@pytest.mark.slow  # Whisper base language identification of every reply
def test_a_resumed_run_retries_a_pending_checklist(tmp_path: Path) -> None:
    world = MumblingJudgeWorld()
    with FakeOpenAIServer(world) as server:
        config = single_turn_config(tmp_path, server.url, metrics=["checklist"], limit=N_QUERIES)
        assert run_cli(config, tmp_path / "run").exit_code == 1
        replies = sum(world.replies.values())
        world.mumbling = False
        again = run_cli(config, tmp_path / "run")
        assert again.exit_code == 0, again.output
        assert sum(world.replies.values()) == replies  # the systems are not called again
    values = [s["value"] for s in checklist_scores(tmp_path / "run")]
    assert values == [4.0 + i % 5 for i in range(N_QUERIES)]
