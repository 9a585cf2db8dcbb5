"""The review file of LLM-drafted sample-level criteria (``voxeval rubrics generate`` writes
it, ``voxeval rubrics review`` edits it, ``voxeval rubrics apply`` merges it into a suite).

A YAML file::

    suite: /abs/path/suite.yaml        # where the dialogues came from
    per_dialogue: 3
    seed: 0
    judge: {...}                       # the drafting judge's identity
    dialogues:                         # what the reviewer needs to see, per drafted dialogue
      sem-1-1:
        dimension: semantic
        capability: {tier1: ..., tier2: ...}
        turns: ["<anxious tone> My chest ...", "Should I call someone?"]
        context: [{id: criteria_m_1, text: ...}]   # criteria it already had
        judge: {judge_calls: 1, parse_failures: 0, ...}
    criteria:
      - {id: criteria_d_3, dialogue: sem-1-1, text: ..., status: pending, draft: ...}
    failures: {sem-2-1: "why drafting failed"}   # retried by the next generate

``draft`` always keeps the generated text; ``text`` is what the reviewer accepted (equal to
the draft unless ``edited``). Every write is atomic, so a review can stop at any moment.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypedDict

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from voxeval import atomic_files
from voxeval.benchmarks.mtalk.dialogue import (
    CRITERION_ID,
    USED_STATUSES,
    Criterion,
    CriterionStatus,
    Dialogue,
)
from voxeval.benchmarks.mtalk.mtalk_taxonomy import Dimension
from voxeval.config import format_validation_error, read_yaml_afresh
from voxeval.errors import ConfigError
from voxeval.json_types import JSONReadObject

DECIDED_STATUSES: frozenset[str] = frozenset({"accepted", "edited", "rejected"})


class DraftedCriterion(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    dialogue: str
    text: str = Field(min_length=1)
    status: CriterionStatus = "pending"
    draft: str = Field(min_length=1, description="the generated text, kept after an edit")

    @model_validator(mode="after")
    def _sample_id(self) -> DraftedCriterion:
        match = CRITERION_ID.match(self.id)
        if match is None or match.group(1) != "d":
            raise ValueError(f"id {self.id!r} is not a sample-level id (criteria_d_N)")
        return self

    def as_criterion(self) -> Criterion:
        """The suite's criterion: the draft is kept only when the text was edited."""
        draft = self.draft if self.status == "edited" else None
        return Criterion(id=self.id, text=self.text, status=self.status, draft=draft)


class DraftedDialogue(BaseModel):
    """What a reviewer sees of a dialogue, copied so the file can be reviewed on its own."""

    model_config = ConfigDict(extra="forbid")
    dimension: Dimension
    scenario: str | None = None
    capability: dict[str, Any] | None = None
    turns: list[str]
    context: list[dict[str, str]] = Field(default_factory=list)
    judge: dict[str, Any] = Field(default_factory=dict)


class RubricDrafts(BaseModel):
    model_config = ConfigDict(extra="forbid")
    suite: str
    per_dialogue: int = Field(ge=1)
    seed: int = 0
    judge: dict[str, Any] = Field(default_factory=dict)
    dialogues: dict[str, DraftedDialogue] = Field(default_factory=dict)
    criteria: list[DraftedCriterion] = Field(default_factory=list)
    failures: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> RubricDrafts:
        seen: set[tuple[str, str]] = set()
        for index, criterion in enumerate(self.criteria):
            if criterion.dialogue not in self.dialogues:
                raise ValueError(
                    f"criteria.{index}.dialogue: {criterion.dialogue!r} is not under dialogues"
                )
            key = (criterion.dialogue, criterion.id)
            if key in seen:
                raise ValueError(f"criteria.{index}: {criterion.id} appears twice")
            seen.add(key)
        return self

    def drafted(self, dialogue_id: str) -> bool:
        return dialogue_id in self.dialogues

    def add(self, dialogue: Dialogue, texts: list[str], judge: JSONReadObject) -> None:
        """Record the drafts of ``dialogue``; ids continue its existing sample criteria."""
        start = next_sample_number(dialogue)
        self.dialogues[dialogue.id] = DraftedDialogue(
            dimension=dialogue.dimension,
            scenario=dialogue.scenario,
            capability=None if dialogue.capability is None else dialogue.capability.model_dump(),
            turns=[turn.transcript for turn in dialogue.turns],
            context=[{"id": c.id, "text": c.text} for c in dialogue.rubrics.used()],
            judge=dict(judge),
        )
        self.failures.pop(dialogue.id, None)
        for offset, text in enumerate(texts):
            self.criteria.append(
                DraftedCriterion(
                    id=f"criteria_d_{start + offset}", dialogue=dialogue.id, text=text, draft=text
                )
            )


def next_sample_number(dialogue: Dialogue) -> int:
    """The N of the first ``criteria_d_N`` after the dialogue's existing sample criteria."""
    numbers = [int(c.id.rsplit("_", 1)[1]) for c in dialogue.rubrics.sample]
    return max(numbers, default=0) + 1


def read_drafts(path: str | Path) -> RubricDrafts:
    file = Path(path)
    # read afresh (not the memoised loader): a review rewrites the file within moments
    data = read_yaml_afresh(file, "no such rubric drafts file")
    try:
        return RubricDrafts.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(str(file), exc)) from exc


def write_drafts(path: str | Path, drafts: RubricDrafts) -> None:
    data = drafts.model_dump(mode="json")
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    atomic_files.write_text_atomic(Path(path), text)


@dataclass(frozen=True)
class AcceptanceCounts:
    accepted: int = 0
    edited: int = 0
    rejected: int = 0
    pending: int = 0

    @property
    def decided(self) -> int:
        return self.accepted + self.edited + self.rejected

    @property
    def used(self) -> int:
        return self.accepted + self.edited

    @property
    def rate(self) -> float | None:
        """(accepted + edited) / decided; None before any decision."""
        return self.used / self.decided if self.decided else None

    def as_dict(self) -> dict[str, float | None]:
        return {
            "accepted": self.accepted,
            "edited": self.edited,
            "rejected": self.rejected,
            "pending": self.pending,
            "decided": self.decided,
            "acceptance_rate": self.rate,
        }


class Acceptance(TypedDict):
    overall: AcceptanceCounts
    dimensions: dict[str, AcceptanceCounts]


def _count(criteria: list[DraftedCriterion]) -> AcceptanceCounts:
    by = {s: sum(c.status == s for c in criteria) for s in ("accepted", "edited", "rejected")}
    pending = sum(c.status == "pending" for c in criteria)
    return AcceptanceCounts(by["accepted"], by["edited"], by["rejected"], pending)


def acceptance(drafts: RubricDrafts) -> Acceptance:
    """Acceptance counts overall and per dimension (dimensions with drafts only)."""
    per_dimension: dict[str, AcceptanceCounts] = {}
    for dimension in sorted({d.dimension for d in drafts.dialogues.values()}):
        ids = {i for i, d in drafts.dialogues.items() if d.dimension == dimension}
        per_dimension[dimension] = _count([c for c in drafts.criteria if c.dialogue in ids])
    return {
        "overall": _count(drafts.criteria),
        "dimensions": per_dimension,
    }


def merge_accepted(
    dialogues: list[Dialogue], drafts: RubricDrafts
) -> tuple[list[Dialogue], dict[str, int]]:
    """The dialogues with every accepted or edited draft added to their sample criteria.

    Re-applying the same file changes nothing (a criterion already there with the same text
    is skipped); an id already used for another text is an error naming both. Returns the
    new dialogues and counts (added, already_present, not_used, unknown_dialogue)."""
    by_dialogue: dict[str, list[DraftedCriterion]] = {}
    for criterion in drafts.criteria:
        by_dialogue.setdefault(criterion.dialogue, []).append(criterion)
    known = {d.id for d in dialogues}
    counts = {"added": 0, "already_present": 0, "not_used": 0, "unknown_dialogue": 0}
    counts["unknown_dialogue"] = sum(
        len(found) for dialogue_id, found in by_dialogue.items() if dialogue_id not in known
    )
    merged: list[Dialogue] = []
    for dialogue in dialogues:
        existing = {c.id: c for c in dialogue.rubrics.all()}
        added: list[Criterion] = []
        for drafted in by_dialogue.get(dialogue.id, []):
            if drafted.status not in USED_STATUSES:
                counts["not_used"] += 1
                continue
            present = existing.get(drafted.id)
            if present is not None:
                if present.text != drafted.text:
                    raise ConfigError(
                        f"dialogue {dialogue.id!r}: {drafted.id} already holds "
                        f"{present.text!r}; the review file has {drafted.text!r}"
                    )
                counts["already_present"] += 1
                continue
            added.append(drafted.as_criterion())
        counts["added"] += len(added)
        rubrics = dialogue.rubrics.model_copy(update={"sample": [*dialogue.rubrics.sample, *added]})
        merged.append(dialogue.model_copy(update={"rubrics": rubrics}))
    return merged, counts
