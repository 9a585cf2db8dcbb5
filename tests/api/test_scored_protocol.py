"""The scoring skeleton of ``voxeval.api.ScoredProtocol``: a protocol writes how to read its
unit and its resources; metric names, system faults, partial failures, stored scores and the
judge's usage are handled once for every protocol."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from voxeval import registry
from voxeval.api import RunContext, WorkUnit
from voxeval.api.scored_protocol import ScoredProtocol, StoredUnit
from voxeval.atomic_files import read_json, write_json_atomic
from voxeval.config import RunConfig
from voxeval.errors import ConfigError
from voxeval.providers.usage.usage_ledger import AttributedProvider
from voxeval.scoring.metric import METRICS
from voxeval.scoring.score import Score
from voxeval.store import RunStore


@dataclass(frozen=True)
class Said:
    text: str


class Echo:
    """The judge's model: answers with what it was asked (nothing is sent anywhere)."""

    def chat(self, prompt: str) -> str:
        return prompt


def contract_words(record: Said, resources: Any) -> Score:
    """Words said; asks the judge once (so the unit's judge usage has one call)."""
    resources.chat(record.text)
    return Score(float(len(record.text.split())), details={"parse_failures": 2})


@pytest.fixture(autouse=True)
def registered() -> Iterator[None]:
    """``contract_words`` is a metric while each test runs (and only then)."""
    METRICS.register("contract_words")(contract_words)
    yield
    registry._REGISTRY["metric"].pop("contract_words")


class Spoken(ScoredProtocol[Said, AttributedProvider]):
    name = "spoken-contract"
    partial: bool = False

    def plan(self, ctx: RunContext) -> list[WorkUnit]:
        return [WorkUnit("a", "s")]

    def interact(self, unit: WorkUnit, ctx: RunContext) -> None:
        raise AssertionError("not called: scoring reads stored artifacts")

    def default_metrics(self, ctx: RunContext) -> list[str]:
        return ["contract_words"]

    def build_resources(self, ctx: RunContext) -> AttributedProvider:
        return AttributedProvider(Echo(), "judge", ("chat",))

    def stored_unit(self, unit: WorkUnit, ctx: RunContext) -> StoredUnit[Said]:
        stored = read_json(ctx.store.folder.unit_dir(unit) / "reply.json")
        if stored is None:
            return StoredUnit(unscorable="no reply.json")
        return StoredUnit(
            record=lambda: Said(stored["text"]),
            fault_cause=stored.get("fault"),
            scored={"assertions": Score(1.0, passed=True)} if stored.get("gated") else {},
        )

    def judge_parse_failures(self, scores: Any) -> int:
        return sum(int(s.details.get("parse_failures") or 0) for s in scores.values())


class PartlyScored(Spoken):
    name = "partly-contract"
    scores_partial_failures = True


def scored(
    tmp_path: Path, reply: dict[str, Any] | None, metrics: list[str] | None = None, *,
    protocol: Spoken | None = None,
) -> tuple[dict[str, Score], dict[str, Any]]:  # fmt: skip
    protocol = protocol or Spoken()
    config = RunConfig(suite="x", systems=[{"name": "s", "type": "scripted"}])
    ctx = RunContext(config=config, store=RunStore(tmp_path / "run"), seed=1, protocol=protocol)
    unit = WorkUnit("a", "s")
    ctx.store.units.record_items([unit])
    if reply is not None:
        write_json_atomic(ctx.store.folder.unit_dir(unit) / "reply.json", reply)
    scores = protocol.score(unit, ctx, metrics)
    usage = ctx.store.usage.summary()
    ctx.store.close()
    return scores, usage


def test_metrics_run_on_the_record_and_the_judge_usage_is_recorded(tmp_path: Path) -> None:
    scores, usage = scored(tmp_path, {"text": "three words here"})
    assert list(scores) == ["contract_words"]
    assert scores["contract_words"].value == 3.0
    judge = usage["by_provider"]["judge"]
    assert (judge["calls"], judge["parse_failures"]) == (1, 2)


def test_unknown_metric_names_are_refused_with_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown metrics \['nope'\]; known: .*contract_words"):
        scored(tmp_path, {"text": "x"}, ["contract_words", "nope"])


def test_a_failed_system_scores_each_metrics_failure_value(tmp_path: Path) -> None:
    scores, usage = scored(
        tmp_path, {"text": "", "fault": "timeout"}, ["assertions", "contract_words"]
    )
    assert (scores["assertions"].value, scores["assertions"].passed) == (0.0, False)
    assert scores["assertions"].details["system_fault"] == "timeout"
    assert not scores["contract_words"].ran  # no failure value declared: said, not guessed
    assert "system fault: timeout" in str(scores["contract_words"].error)
    assert "judge" not in usage["by_provider"]  # nothing was scored


def test_a_partial_failure_is_scored_on_what_it_left(tmp_path: Path) -> None:
    reply = {"text": "two words", "fault": "timeout", "gated": True}
    scores, _ = scored(tmp_path, reply, ["assertions", "contract_words"], protocol=PartlyScored())
    # the stored score is kept (not computed again); both are marked with the fault
    assert (scores["assertions"].value, scores["assertions"].passed) == (1.0, True)
    assert scores["contract_words"].value == 2.0
    assert scores["contract_words"].details["system_fault"] == "timeout"


def test_a_unit_without_artifacts_is_not_run_with_the_reason(tmp_path: Path) -> None:
    scores, _ = scored(tmp_path, None)
    assert not scores["contract_words"].ran and scores["contract_words"].error == "no reply.json"
