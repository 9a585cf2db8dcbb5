"""Plain values the store hands back: score rows and unit records."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


class UnitLike(Protocol):
    """What the store needs from a work unit (``voxeval.runner.WorkUnit`` fits)."""

    @property
    def item_id(self) -> str: ...
    @property
    def system(self) -> str: ...
    @property
    def trial(self) -> int: ...
    @property
    def condition(self) -> str: ...
    @property
    def category(self) -> str: ...
    @property
    def key(self) -> str: ...


@dataclass(frozen=True)
class ScoreRow:
    """One metric of one unit, as stored in the index."""

    item_id: str
    system: str
    trial: int
    condition: str
    category: str
    metric: str
    value: float | None
    passed: bool | None
    error: str | None
    details: dict[str, Any] = field(default_factory=dict)
    pending: bool = False  # not scored yet (a transient fault on our side); retried later

    @property
    def ran(self) -> bool:
        return self.error is None and self.value is not None


# A unit whose interaction finished and was committed with what it cost, not yet scored
# (a run killed while scoring it): resume scores it from its folder without asking again.
INTERACTED = "interacted"


@dataclass(frozen=True)
class UnitRecord:
    """A unit as the index knows it. ``status``: planned | running | interacted | done |
    failed.

    ``cause``: why a failed unit failed (the component on our side at fault);
    ``system_fault``: the cause of a done (or interacted) unit whose system under test failed
    (scored as a failure)."""

    item_id: str
    system: str
    trial: int
    condition: str
    category: str
    status: str
    error: str | None = None
    attempts: int = 0
    cause: str | None = None
    system_fault: str | None = None

    @property
    def key(self) -> str:
        return f"{self.item_id}|{self.condition}|{self.system}|{self.trial}"
