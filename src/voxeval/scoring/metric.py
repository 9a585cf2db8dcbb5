"""What a metric is, for every protocol, and the registry kind that finds metrics by name."""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from voxeval.registry import Kind
from voxeval.scoring.score import Score

RecordT = TypeVar("RecordT", contravariant=True)


class Metric(Protocol[RecordT]):
    """Scores one stored record of a protocol (a single-turn ``ReplyRecord``, a
    ``LiveCallRecord``) with that protocol's scoring resources; it never calls the system.
    The record type it accepts (its first parameter's annotation) says which protocol it
    applies to."""

    def __call__(self, record: RecordT, resources: Any, /) -> Score: ...


# The record type differs by protocol and is only known once a metric is looked up by name.
METRICS: Kind[Metric[Any]] = Kind("metric")
