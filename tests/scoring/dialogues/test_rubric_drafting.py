"""Drafting sample criteria against a loopback judge: N questions per dialogue into the review
file, malformed answers (not JSON, wrong count, not a question, a repeat) retried and counted,
a dialogue never answered in format listed and drafted by the next run, an unreachable judge
stops the run, resuming skips drafted dialogues, seeds fixed per dialogue."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.benchmarks.rubric_fixtures import write_suite
from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text, error
from voxeval.benchmarks.mtalk.dialogue import Dialogue
from voxeval.benchmarks.mtalk.dialogue_suite import load_dialogue_suite
from voxeval.benchmarks.rubric_drafts import read_drafts
from voxeval.errors import ConfigError
from voxeval.providers import create_provider
from voxeval.scoring.dialogues.rubric_drafting import dialogue_seed, draft_criteria, generate_drafts
from voxeval.scoring.judge import Judge

FAST = {"timeout_s": 2.0, "max_retries": 0, "backoff_base_s": 0.001, "backoff_max_s": 0.002}
MARKERS = {"My exam is on Friday": "sem-1", "chest feels tight": "para-1", "phone ringing": "amb-1"}


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture
def dialogues(tmp_path: Path) -> list[Dialogue]:
    return load_dialogue_suite(write_suite(tmp_path / "suite")).dialogues


def make_judge(server: FakeOpenAIServer) -> Judge:
    spec = {"provider": "openai", "base_url": server.url, "model": "judge", **FAST}
    return Judge(create_provider("llm", {**spec, "schema_retries": 0}), max_attempts=3)


def texts(*found: str) -> FakeResponse:
    return chat_text(json.dumps({"criteria": [{"text": t} for t in found]}))


def dialogue_of(body: Any) -> str:
    user = body["messages"][1]["content"]
    return next(d for marker, d in MARKERS.items() if marker in user)


def test_draft_criteria_prompt_and_answer(server: FakeOpenAIServer, dialogues: list) -> None:
    para = dialogues[1]
    server.push(texts("Does it notice the anxiety?", "Does it   mention the sigh?"))
    outcome = draft_criteria(make_judge(server), para, 2, seed=7)
    assert outcome.texts == ["Does it notice the anxiety?", "Does it mention the sigh?"]
    body = server.posts("/chat/completions")[0].body
    prompt = body["messages"][1]["content"]
    assert "<anxious tone> My chest feels tight [sigh]" in prompt
    assert "paralinguistic-comprehension / emotion-detection" in prompt
    assert "- Does it advise urgent care?" in prompt  # used criteria are context
    assert "Does it ask about pain?" not in prompt  # a rejected one is not
    assert body["seed"] == dialogue_seed(7, "para-1")


@pytest.mark.parametrize(
    "bad",
    [
        chat_text("here you go: two questions"),  # not JSON
        texts("Does it notice the anxiety?"),  # one item, two asked
        texts("It notices the anxiety.", "Does it mention the sigh?"),  # not a question
        texts("Does it advise urgent care?", "Does it mention the sigh?"),  # repeats d_1
        texts("Does it help?", "does it  help?"),  # repeats itself
    ],
)
def test_malformed_drafts_are_retried_and_counted(
    server: FakeOpenAIServer, dialogues: list, bad: FakeResponse
) -> None:
    server.push(bad, texts("Does it notice the anxiety?", "Does it mention the sigh?"))
    outcome = draft_criteria(make_judge(server), dialogues[1], 2)
    assert outcome.texts is not None and len(outcome.texts) == 2
    assert (outcome.result.parse_failures, outcome.result.attempts) == (1, 2)


def test_generate_resumes_and_retries_failed_dialogues(tmp_path: Path, dialogues: list) -> None:
    out = tmp_path / "drafts.yaml"
    seen: list[str] = []

    def first_run(path: str, body: Any) -> FakeResponse:
        dialogue = dialogue_of(body)
        seen.append(dialogue)
        if dialogue == "para-1":  # never in format: left for the next run
            return chat_text("no JSON today")
        return texts(f"Does it answer {dialogue}?", f"Is {dialogue} handled?")

    with FakeOpenAIServer(first_run) as server:
        summary = generate_drafts(
            dialogues, make_judge(server), out, suite="tiny", per_dialogue=2, seed=3
        )
    assert (summary.drafted, summary.skipped, summary.criteria) == (2, 0, 4)
    assert list(summary.failed) == ["para-1"] and "malformed" in summary.failed["para-1"]
    assert summary.parse_failures == 3 and summary.judge_calls == 5
    drafts = read_drafts(out)
    assert sorted(drafts.dialogues) == ["amb-1", "sem-1"]
    assert list(drafts.failures) == ["para-1"]
    assert [c.id for c in drafts.criteria] == ["criteria_d_1", "criteria_d_2"] * 2

    seen.clear()

    def second_run(path: str, body: Any) -> FakeResponse:
        seen.append(dialogue_of(body))
        return texts("Does it notice the anxiety?", "Does it mention the sigh?")

    with FakeOpenAIServer(second_run) as server:
        judge = make_judge(server)
        summary = generate_drafts(dialogues, judge, out, suite="tiny", per_dialogue=2, seed=3)
    assert seen == ["para-1"]  # drafted dialogues are skipped
    assert (summary.drafted, summary.skipped, summary.failed) == (1, 2, {})
    drafts = read_drafts(out)
    assert drafts.failures == {}
    assert [c.id for c in drafts.criteria if c.dialogue == "para-1"] == [
        "criteria_d_3",
        "criteria_d_4",
    ]
    # another count or seed is another file
    with pytest.raises(ConfigError, match="per_dialogue=2, seed=3"):
        generate_drafts(dialogues, judge, out, suite="tiny", per_dialogue=3, seed=3)


def test_unreachable_judge_stops_the_run(tmp_path: Path, dialogues: list) -> None:
    out = tmp_path / "drafts.yaml"
    with FakeOpenAIServer(lambda path, body: error(503, "down")) as server:
        summary = generate_drafts(dialogues, make_judge(server), out, suite="tiny", per_dialogue=2)
        assert len(server.posts("/chat/completions")) == 1  # no hammering a dead endpoint
    assert summary.unreachable is not None and list(summary.failed) == ["sem-1"]
    assert read_drafts(out).failures["sem-1"].startswith("judge endpoint")


def test_dialogue_seed_is_stable_and_spaced() -> None:
    seeds = {dialogue_seed(0, d) for d in ("sem-1", "para-1", "amb-1")}
    assert len(seeds) == 3 and all(s % 100 == 0 for s in seeds)
    assert dialogue_seed(1, "sem-1") == dialogue_seed(1, "sem-1") != dialogue_seed(0, "sem-1")
