"""Multi-turn dialogues (MTalk-Bench protocol): the user side of a dialogue and its rubrics.

A dialogue has an id, a dimension (semantic, paralinguistic, ambient), one of the 9 scenarios,
a tier-1/tier-2 capability from the taxonomy (``mtalk_taxonomy``), 1..n user turns
(transcript with its tags kept as annotations, audio once rendered) and rubric criteria at
three levels with stable ids: ``criteria_s_N`` (general), ``criteria_m_N`` (dimension) and
``criteria_d_N`` (sample), the ids the reference release uses in its prompts.

Sample-level criteria may be drafted by an LLM: each criterion has a review ``status``
(pending, accepted, edited, rejected); only accepted and edited criteria are used.

Each user turn is a benchmark item of its own for systems that look replies up by id
(``replay``): ``turn_item_id("sem-1-1", 2) == "sem-1-1.turn2"``.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from voxeval.benchmarks.mtalk.mtalk_taxonomy import (
    SCENARIO_IDS,
    Dimension,
    scenario_id,
    tier1_id,
    tier1_ids,
    tier2_id,
    tier2_ids,
)

RubricLevel = Literal["general", "dimension", "sample"]
RUBRIC_LEVELS: tuple[RubricLevel, ...] = ("general", "dimension", "sample")
# The letter of each level in a criterion id (criteria_<letter>_<N>).
LEVEL_LETTER: dict[RubricLevel, str] = {"general": "s", "dimension": "m", "sample": "d"}
LEVEL_OF_LETTER: dict[str, RubricLevel] = {v: k for k, v in LEVEL_LETTER.items()}
CRITERION_ID = re.compile(r"^criteria_([smd])_([1-9][0-9]*)$")

CriterionStatus = Literal["pending", "accepted", "edited", "rejected"]
USED_STATUSES: frozenset[str] = frozenset({"accepted", "edited"})

# Annotations inside a transcript: [laughs], [phone ringing], <anxious tone>.
_TAG = re.compile(r"\[([^\[\]]+)\]|<([^<>]+)>")
# Dialogue ids become file names and item ids; '__' is the rendered-item separator of replay.
_DIALOGUE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


def turn_item_id(dialogue_id: str, turn: int) -> str:
    """The item id of a dialogue's user turn (1-based), as ``replay`` looks it up."""
    return f"{dialogue_id}.turn{turn}"


def transcript_tags(transcript: str) -> list[str]:
    """The annotations of a transcript, in order, as written (``[laughs]``, ``<slow pace>``)."""
    return [m.group(0) for m in _TAG.finditer(transcript)]


def strip_tags(transcript: str) -> str:
    """The spoken words of a transcript: annotations removed, spaces tidied."""
    return re.sub(r"\s+", " ", _TAG.sub(" ", transcript)).strip()


class Criterion(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(description="criteria_s_N (general), criteria_m_N (dimension), criteria_d_N")
    text: str = Field(min_length=1, description="a yes/no question about the reply")
    status: CriterionStatus = "accepted"
    draft: str | None = Field(default=None, description="the generated text before an edit")

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not CRITERION_ID.match(value):
            raise ValueError(f"{value!r} is not criteria_s_N, criteria_m_N or criteria_d_N")
        return value

    @property
    def level(self) -> RubricLevel:
        match = CRITERION_ID.match(self.id)
        assert match is not None  # checked by the validator
        return LEVEL_OF_LETTER[match.group(1)]

    @property
    def used(self) -> bool:
        return self.status in USED_STATUSES


class Rubrics(BaseModel):
    model_config = ConfigDict(extra="forbid")
    general: list[Criterion] = Field(default_factory=list)
    dimension: list[Criterion] = Field(default_factory=list)
    sample: list[Criterion] = Field(default_factory=list)

    @model_validator(mode="after")
    def _ids_match_levels(self) -> Rubrics:
        seen: set[str] = set()
        for level in RUBRIC_LEVELS:
            for index, criterion in enumerate(getattr(self, level)):
                if criterion.level != level:
                    letter = LEVEL_LETTER[level]
                    raise ValueError(
                        f"{level}[{index}]: id {criterion.id!r} is not a {level} criterion "
                        f"(criteria_{letter}_N)"
                    )
                if criterion.id in seen:
                    raise ValueError(f"{level}[{index}]: id {criterion.id!r} appears twice")
                seen.add(criterion.id)
        return self

    def used(self, level: RubricLevel | None = None) -> list[Criterion]:
        """Accepted and edited criteria (of one level, or all levels in order)."""
        levels = RUBRIC_LEVELS if level is None else (level,)
        return [c for lv in levels for c in getattr(self, lv) if c.used]

    def all(self) -> list[Criterion]:
        return [c for level in RUBRIC_LEVELS for c in getattr(self, level)]


class Capability(BaseModel):
    """Tier-1 (foundational) and tier-2 (fine-grained) capability; checked against the
    taxonomy of the dialogue's dimension by ``Dialogue``."""

    model_config = ConfigDict(extra="forbid")
    tier1: str
    tier2: str | None = None


class UserTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    transcript: str = Field(min_length=1, description="what the user says, tags kept inline")
    tags: list[str] = Field(default_factory=list, description="default: the transcript's tags")
    audio: str | None = Field(default=None, description="recording (optional until rendered)")

    @model_validator(mode="after")
    def _default_tags(self) -> UserTurn:
        if not self.tags:
            self.tags = transcript_tags(self.transcript)
        return self


class Dialogue(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    dimension: Dimension
    scenario: str | None = Field(default=None, description="one of the 9 scenario ids")
    capability: Capability | None = None
    turns: list[UserTurn] = Field(min_length=1)
    rubrics: Rubrics = Field(default_factory=Rubrics)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not _DIALOGUE_ID.match(value) or "__" in value:
            raise ValueError(
                f"{value!r}: use letters, digits, '.', '_' and '-' (no '__', no leading "
                "punctuation)"
            )
        return value

    @field_validator("scenario")
    @classmethod
    def _known_scenario(cls, value: str | None) -> str | None:
        if value is None:
            return None
        found = scenario_id(value)
        if found is None:
            raise ValueError(f"unknown scenario {value!r} (known: {', '.join(SCENARIO_IDS)})")
        return found

    @model_validator(mode="after")
    def _capability_in_taxonomy(self) -> Dialogue:
        cap = self.capability
        if cap is None:
            return self
        tier1 = tier1_id(self.dimension, cap.tier1)
        if tier1 is None:
            known = ", ".join(tier1_ids(self.dimension))
            raise ValueError(
                f"capability.tier1: {cap.tier1!r} is not a {self.dimension} capability "
                f"(known: {known})"
            )
        tier2 = None
        if cap.tier2 is not None:
            tier2 = tier2_id(self.dimension, tier1, cap.tier2)
            if tier2 is None:
                known = ", ".join(tier2_ids(self.dimension, tier1))
                raise ValueError(
                    f"capability.tier2: {cap.tier2!r} is not part of {tier1} (known: {known})"
                )
        self.capability = Capability(tier1=tier1, tier2=tier2)
        return self

    def item_ids(self) -> list[str]:
        return [turn_item_id(self.id, n) for n in range(1, len(self.turns) + 1)]
