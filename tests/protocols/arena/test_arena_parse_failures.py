"""Every malformed arena answer is counted and ``judge_attempts`` bounds the requests per
verdict: the judge's provider keeps its default ``schema_retries`` (2), which used to retry a
bad answer inside the provider, out of the judge's sight (18 bad answers in 36 requests were
reported as 0 parse failures). A loopback judge answers every new prompt with prose first."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from tests.protocols.arena.arena_runs import FAST, arena_context, preferring_judge
from voxeval.api.context import RunContext
from voxeval.protocols.arena.multi_turn_arena import (
    arena_comparisons,
    compare_arena,
    summarize_arena,
)
from voxeval.protocols.comparison import Comparison
from voxeval.report.markdown import render_markdown

# every reply different, so every prompt (and every first answer) is new
REPLIES = {
    ("d1", "alpha"): ["good one"], ("d1", "beta"): ["poor two"], ("d1", "gamma"): ["good 3"],
    ("d2", "alpha"): ["poor four"], ("d2", "beta"): ["good five"], ("d2", "gamma"): ["poor 6"],
}  # fmt: skip


class FirstAnswerMalformed:
    """Prose (not JSON) the first time a prompt is seen, then the preferring judge."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()
        self.malformed = 0

    def __call__(self, path: str, body: dict[str, Any]) -> FakeResponse:
        prompt = json.dumps(body["messages"][:2])  # a retry keeps the system and user prompt
        self.seen[prompt] += 1
        if self.seen[prompt] == 1:
            self.malformed += 1
            return chat_text("Model A seems better to me.")
        return preferring_judge(path, body)


def _judge(url: str) -> dict[str, Any]:
    return {"provider": "openai", "base_url": url, "model": "judge", **FAST}  # schema_retries 2


def _run(ctx: RunContext, comparisons: list[Comparison]) -> None:
    for comparison in comparisons:
        result = compare_arena(comparison, ctx)
        ctx.store.comparisons.save(comparison.step, comparison.key, comparison.unit_keys, result)


def test_each_malformed_answer_is_one_counted_parse_failure(tmp_path: Path) -> None:
    judge = FirstAnswerMalformed()
    with FakeOpenAIServer(judge) as server:
        ctx, units = arena_context(tmp_path, REPLIES, arena={"judge_attempts": 3, "resamples": 20})
        ctx = _with_judge(ctx, server.url)
        comparisons = arena_comparisons(ctx, units)
        _run(ctx, comparisons)
        requests = len(server.posts())
    verdicts = 2 * len(comparisons)  # both orders: 2 dialogues x 3 pairs x 2
    assert (len(comparisons), judge.malformed) == (6, verdicts)
    # one malformed answer and one answer in format per verdict; no hidden provider retry
    assert requests == 2 * verdicts
    summary = summarize_arena(ctx)
    assert summary["parse_failures"] == {
        "total": 12, "by_system": {"alpha": 8, "beta": 8, "gamma": 8}
    }  # fmt: skip
    counts = summary["dimensions"]["ambient"]["comparisons"]
    assert (counts["done"], counts["parse_failures"], counts["judge_requests"]) == (6, 12, 24)
    assert summary["dimensions"]["ambient"]["parse_failures_by_system"]["beta"] == 8
    markdown = render_markdown({"systems": {}, "arena": summary})
    assert "| ambient | beta | 8 |" in markdown


def test_judge_attempts_bounds_the_requests_per_verdict(tmp_path: Path) -> None:
    judge = FirstAnswerMalformed()
    with FakeOpenAIServer(judge) as server:
        ctx, units = arena_context(tmp_path, REPLIES, arena={"judge_attempts": 1, "resamples": 20})
        ctx = _with_judge(ctx, server.url)
        comparisons = arena_comparisons(ctx, units)
        _run(ctx, comparisons)
        requests = len(server.posts())
    # one attempt: the first order's malformed answer leaves each comparison pending
    assert requests == len(comparisons) == judge.malformed
    summary = summarize_arena(ctx)
    counts = summary["dimensions"]["ambient"]["comparisons"]
    assert (counts["pending"], counts["parse_failures"], counts["judge_requests"]) == (6, 6, 6)


def _with_judge(ctx: RunContext, url: str) -> RunContext:
    config = type(ctx.config).model_validate({**ctx.config.model_dump(), "judge": _judge(url)})
    return RunContext(config=config, store=ctx.store, seed=ctx.seed)
