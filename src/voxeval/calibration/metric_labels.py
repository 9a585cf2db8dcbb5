"""The judged metrics a development set calibrates, and how a metric's ``Score`` reads as a
verdict comparable with the expected labels: the call flagged (the metric fails) or not, and
each dimension flagged or not.

A dimension label is True (the defect is there: the judge should flag it), False (it is not:
the judge should not) or None (the edit may reasonably touch it either way, e.g. a fabricated
value can also be read as a hallucination): None labels are left out of that dimension's
figures."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from voxeval.json_types import JSONReadValue
from voxeval.scoring.score import Score

JudgeKind = Literal["text", "audio"]


@dataclass(frozen=True)
class Verdict:
    """What the judge said through the metric: ``defect`` (the call fails) and, per
    dimension, whether it was flagged (None: the score does not say)."""

    defect: bool
    dimensions: dict[str, bool | None] = field(default_factory=dict)


def _failed(score: Score) -> bool:
    if score.passed is not None:
        return not score.passed
    return score.value is not None and score.value < 1.0


def _rated_dimensions(names: tuple[str, ...]) -> Callable[[Score], dict[str, bool | None]]:
    """``details["dimensions"][name]`` is a 1-3 rating; flagged below 3."""

    def read(score: Score) -> dict[str, bool | None]:
        ratings = score.details.get("dimensions") or {}
        return {n: (int(ratings[n]) < 3 if n in ratings else None) for n in names}

    return read


def _tag_counts(names: tuple[str, ...]) -> Callable[[Score], dict[str, bool | None]]:
    """``details["tag_counts"][name]``: a failure tag given to at least one turn."""

    def read(score: Score) -> dict[str, bool | None]:
        counts = score.details.get("tag_counts") or {}
        return {n: (int(counts[n]) > 0 if n in counts else None) for n in names}

    return read


def _flag(value: JSONReadValue) -> bool | None:
    """A per-type entry of a judge's details as flagged or not: a boolean, a 0/1 number
    (1 = present), or a mapping with a ``present``/``detected``/``flagged``/``failed`` key."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return bool(value)
    if isinstance(value, Mapping):
        for key in ("present", "detected", "flagged", "failed", "corrupted"):
            if isinstance(value.get(key), bool):
                return bool(value[key])
    return None


def _typed_flags(names: tuple[str, ...]) -> Callable[[Score], dict[str, bool | None]]:
    """Flags per type from a metric whose details name each type (directly or in a nested
    mapping such as ``details["corruptions"]``); None where the details do not say."""

    def read(score: Score) -> dict[str, bool | None]:
        places: list[Mapping[str, Any]] = [score.details]
        places += [v for v in score.details.values() if isinstance(v, Mapping)]
        out: dict[str, bool | None] = {}
        for name in names:
            found = next((p[name] for p in places if name in p), None)
            out[name] = _flag(found)
        return out

    return read


def _no_dimensions(score: Score) -> dict[str, bool | None]:
    return {}


@dataclass(frozen=True)
class MetricLabels:
    """A calibrated metric: its judge, its dimensions and how its score reads."""

    metric: str
    judge: JudgeKind
    dimensions: tuple[str, ...]
    read_dimensions: Callable[[Score], dict[str, bool | None]]
    rule: str  # when the call counts as flagged, in words (for the help and the report)

    def verdict(self, score: Score) -> Verdict:
        return Verdict(_failed(score), self.read_dimensions(score))

    def clean_dimensions(self) -> dict[str, bool | None]:
        return dict.fromkeys(self.dimensions, False)


FAITHFULNESS_DIMENSIONS = (
    "fabricated_tool_parameters",
    "misrepresented_tool_results",
    "policy_violations",
    "failure_to_disambiguate",
    "hallucination",
)
PROGRESSION_DIMENSIONS = (
    "unnecessary_tool_calls",
    "information_loss",
    "redundant_statements",
    "question_quality",
)
CONCISENESS_TAGS = (
    "verbosity_or_filler",
    "excess_information_density",
    "over_enumeration",
    "disproportionate_detail",
)
# The five corruption types of a simulated caller (EVA-Bench user behavioural fidelity), as
# the metric names them in ``details["corruption"][TYPE]["detected"]``.
CALLER_CORRUPTIONS = (
    "extra_modifications",
    "premature_ending",
    "missing_information",
    "duplicate_modifications",
    "decision_tree_violation",
)

METRIC_LABELS: dict[str, MetricLabels] = {
    m.metric: m
    for m in (
        MetricLabels(
            "faithfulness",
            "text",
            FAITHFULNESS_DIMENSIONS,
            _rated_dimensions(FAITHFULNESS_DIMENSIONS),
            "fails below 0.5 (the worst dimension rated 1); a dimension is flagged below 3",
        ),
        MetricLabels(
            "conversation_progression",
            "text",
            PROGRESSION_DIMENSIONS,
            _rated_dimensions(PROGRESSION_DIMENSIONS),
            "fails below 0.5 (a dimension rated 1, or three flagged); flagged below 3",
        ),
        MetricLabels(
            "conciseness",
            "text",
            CONCISENESS_TAGS,
            _tag_counts(CONCISENESS_TAGS),
            "fails below 0.5 (mean normalised turn rating); a tag is flagged on any turn",
        ),
        MetricLabels(
            "speakability",
            "text",
            (),
            _no_dimensions,
            "flagged when any agent turn is judged unspeakable (share below 1)",
        ),
        MetricLabels(
            "user_behavioural_fidelity",
            "text",
            CALLER_CORRUPTIONS,
            _typed_flags(CALLER_CORRUPTIONS),
            "fails when the judge finds any corruption of the simulated caller",
        ),
        MetricLabels(
            "agent_speech_fidelity",
            "audio",
            (),
            _no_dimensions,
            "fails below 0.95 (share of agent turns whose audio says the intended text)",
        ),
    )
}
