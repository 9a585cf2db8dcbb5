"""What a metric is, for every protocol, and the registry kind that finds metrics by name.

A metric is registered with its metadata by one decorator:

    @metric("politeness", better="higher",
            failure=FailureValue(0.0, False, "nothing polite was said"),
            protocols=("live_call",))
    def politeness(record: LiveCallRecord, resources: ScoringResources) -> Score: ...

``better`` says which way its value is better (None: descriptive, comparisons skip it),
``failure`` what it scores when the system under test failed (``voxeval.scoring.system_fault``),
``protocols`` the protocols whose records it scores and ``modes`` the live-call simulation
modes it can run in (None: every mode).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol, TypeVar

from voxeval.registry import Kind, lookup
from voxeval.scoring.score import Score

RecordT = TypeVar("RecordT", contravariant=True)
ResourcesT = TypeVar("ResourcesT", contravariant=True)


class Metric(Protocol[RecordT, ResourcesT]):
    """Scores one stored record of a protocol (a single-turn ``ReplyRecord``, a
    ``LiveCallRecord``) with that protocol's scoring resources; it never calls the system.
    The record type it accepts (its first parameter's annotation) says which protocol it
    applies to."""

    def __call__(self, record: RecordT, resources: ResourcesT, /) -> Score: ...


# The record and resources types differ by protocol and are only known once a metric is
# looked up by name.
METRICS: Kind[Metric[Any, Any]] = Kind("metric")

Better = Literal["higher", "lower"]
Descriptive = Literal["descriptive"]
DESCRIPTIVE: Final[Descriptive] = "descriptive"
_DIRECTIONS: Final = ("higher", "lower")


@dataclass(frozen=True)
class FailureValue:
    """The score of a metric on a failed unit; ``basis`` says why this is the worst value."""

    value: float
    passed: bool | None
    basis: str
    always: bool = False  # live calls: even when the partial call could be scored


@dataclass(frozen=True)
class MetricInfo:
    """What a registered metric declares about itself (see ``metric``)."""

    name: str
    better: Better | None
    # None: not declared (a failed unit's score says so rather than guess a value)
    failure: FailureValue | Descriptive | None
    protocols: frozenset[str]
    modes: frozenset[str] | None = None


# Filled by ``@metric`` only, one entry per registered metric.
_DECLARED: dict[str, MetricInfo] = {}

M = TypeVar("M", bound=Callable[..., Score])


def metric(
    name: str,
    *,
    better: Better | None,
    failure: FailureValue | Descriptive | None,
    protocols: Iterable[str],
    modes: Iterable[str] | None = None,
) -> Callable[[M], M]:
    """Register a metric function as ``name`` with its metadata (see the module docstring)."""
    if better is not None and better not in _DIRECTIONS:
        raise ValueError(f"metric {name!r}: better is 'higher', 'lower' or None, not {better!r}")
    if failure is not None and failure != DESCRIPTIVE and not isinstance(failure, FailureValue):
        raise ValueError(f"metric {name!r}: failure is a FailureValue or DESCRIPTIVE")
    info = MetricInfo(
        name=name,
        better=better,
        failure=failure,
        protocols=frozenset(protocols),
        modes=None if modes is None else frozenset(modes),
    )

    def register(function: M) -> M:
        METRICS.register(name)(function)
        _DECLARED[name] = info
        return function

    return register


def metric_info(name: str) -> MetricInfo | None:
    """The metadata of the registered metric ``name``; None for a metric registered without
    it (a plugin using the plain registry). ``UnknownComponent`` for an unknown name."""
    lookup("metric", name)
    return _DECLARED.get(name)
