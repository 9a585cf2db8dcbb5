"""The metric written in docs/extending.md works as printed: one decorator registers it with
its direction, failure value and protocol, and the metric loop runs it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from voxeval import registry
from voxeval.scoring.metric import metric_info
from voxeval.scoring.metric_direction import metric_direction
from voxeval.scoring.metric_runner import run_metric
from voxeval.scoring.replies.reply_record import ReplyRecord, ScoringResources
from voxeval.scoring.system_fault import failure_score

DOC = Path(__file__).resolve().parents[2] / "docs" / "extending.md"


@pytest.fixture
def documented() -> Iterator[None]:
    section = DOC.read_text(encoding="utf-8").split("## A metric")[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    namespace: dict[str, object] = {"__name__": "docs_extending_metric"}
    exec(compile(match.group(1), str(DOC), "exec"), namespace)
    yield
    registry._REGISTRY["metric"].pop("says_thanks")


@pytest.mark.usefixtures("documented")
def test_the_documented_metric_is_registered_with_its_metadata() -> None:
    info = metric_info("says_thanks")
    assert info is not None and info.protocols == frozenset({"single_turn"})
    assert metric_direction("says_thanks") == "higher"
    failed = failure_score("says_thanks", "timeout")
    assert (failed.value, failed.passed) == (0.0, False)
    record = ReplyRecord(item_id="q1", query="hi", reply_audio=None, reply_text="Thank you!")
    score = run_metric("says_thanks", record, ScoringResources())
    assert (score.value, score.passed) == (1.0, True)
    silent = ReplyRecord(item_id="q1", query="hi", reply_audio=None)
    assert run_metric("says_thanks", silent, ScoringResources()).error == (
        "the system has no text channel"
    )
