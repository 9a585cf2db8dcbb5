"""Content density against a loopback judge: golden value (3 clauses, one removable), the
judge's clause numbers validated (out of range, repeated: parse failures, retried and
counted), no judge -> not run, the metric over ``dialogue.json``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from voxeval.errors import ConfigError
from voxeval.providers import create_provider
from voxeval.scoring.dialogues.content_density import density, judge_content_density
from voxeval.scoring.dialogues.dialogue_replies import DialogueReplies
from voxeval.scoring.judge import Judge
from voxeval.scoring.metric_runner import run_metric
from voxeval.scoring.replies.reply_record import ScoringResources

FAST = {"timeout_s": 2.0, "max_retries": 0, "backoff_base_s": 0.001, "backoff_max_s": 0.002}
# clauses: 7 words | 4 words | 5 words
REPLY = "I am so sorry to hear that. Drink plenty of water, and rest for two days."


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def make_judge(server: FakeOpenAIServer) -> Judge:
    spec = {"provider": "openai", "base_url": server.url, "model": "judge", **FAST}
    return Judge(create_provider("llm", {**spec, "schema_retries": 0}), max_attempts=3)


def answer(obj: Any) -> FakeResponse:
    return chat_text(json.dumps(obj))


def test_golden_density_one_removable_clause(server: FakeOpenAIServer) -> None:
    server.push(answer({"removable": [1]}))
    score = judge_content_density(make_judge(server), REPLY, "User (turn 1): I have a cold.")
    assert score.value == pytest.approx(9 / 16)
    assert score.details["removable"] == [1]
    assert (score.details["essential_words"], score.details["total_words"]) == (9, 16)
    assert score.details["parse_failures"] == 0 and score.details["judge_calls"] == 1
    prompt = server.posts("/chat/completions")[0].body["messages"][1]["content"]
    assert "[1] I am so sorry to hear that.\n[2] Drink plenty of water,\n[3] and rest" in prompt
    assert "User (turn 1): I have a cold." in prompt


@pytest.mark.parametrize(
    "bad", [{"removable": [4]}, {"removable": [0]}, {"removable": [2, 2]}, {"keep": [1]}]
)
def test_bad_clause_numbers_are_parse_failures(server: FakeOpenAIServer, bad: Any) -> None:
    server.push(answer(bad), answer({"removable": []}))
    score = judge_content_density(make_judge(server), REPLY)
    assert score.value == 1.0  # nothing removable on the retry
    assert score.details["parse_failures"] == 1 and score.details["judge_calls"] == 2


def test_never_in_format_is_pending(server: FakeOpenAIServer) -> None:
    server.push(*[answer({"removable": [9]})] * 3)
    score = judge_content_density(make_judge(server), REPLY)
    assert score.value is None and score.pending
    assert score.details["parse_failures"] == 3


def test_density_formula() -> None:
    clauses = ["one two three", "four", "five six"]
    assert density(clauses, []) == 1.0
    assert density(clauses, [1, 3]) == pytest.approx(1 / 6)
    assert density(clauses, [1, 2, 3]) == 0.0


def write_unit(tmp_path: Path, turns: list[dict[str, Any]]) -> Path:
    (tmp_path / "dialogue.json").write_text(json.dumps({"turns": turns}))
    return tmp_path


def test_metric_reads_the_final_reply_of_dialogue_json(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    unit = write_unit(
        tmp_path,
        [
            {"index": 2, "reply_text": REPLY, "user_text": "What should I do?"},
            {"index": 1, "reply_text": "Oh no, a cold.", "user_text": "I have a cold."},
        ],
    )
    record = DialogueReplies.from_unit_dir(unit)
    server.push(answer({"removable": [1, 2]}))
    score = run_metric(
        "content_density", record, ScoringResources(judge=lambda: make_judge(server))
    )
    assert score.value == pytest.approx(5 / 16)
    prompt = server.posts("/chat/completions")[0].body["messages"][1]["content"]
    # the earlier turn is context, in index order; the final reply is what is split
    assert prompt.index("User (turn 1): I have a cold.") < prompt.index("Assistant (turn 1)")
    assert "User (turn 2): What should I do?" in prompt
    assert "Assistant (turn 2)" not in prompt


def test_metric_without_judge_or_reply_is_not_run(tmp_path: Path) -> None:
    record = DialogueReplies.from_json({"turns": [{"index": 1, "reply_text": REPLY}]}, "x")
    score = run_metric("content_density", record, ScoringResources())
    assert score.value is None and not score.pending and "judge" in (score.error or "")
    empty = DialogueReplies.from_json({"turns": [{"index": 1, "reply_text": "  "}]}, "x")
    score = run_metric("content_density", empty, ScoringResources())
    assert score.value is None and "no final reply text" in (score.error or "")


def test_dialogue_json_errors_name_the_field(tmp_path: Path) -> None:
    unit = write_unit(tmp_path, [{"index": "1", "reply_text": "hi"}])
    with pytest.raises(ConfigError, match=r"dialogue.json: turns.0.index"):
        DialogueReplies.from_unit_dir(unit)
    with pytest.raises(ConfigError, match="not found"):
        DialogueReplies.from_unit_dir(tmp_path / "nowhere")
