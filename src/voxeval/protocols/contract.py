"""The contract between the generic runner and an evaluation protocol.

A protocol (``single_turn``, ``live_call``, later ``multi_turn``) is registered with
``@register("protocol", NAME)`` and knows how to turn a suite into work units, how to run one
unit against one system (writing artifacts into the unit's folder), how to score a finished
unit from its stored artifacts alone (so re-scoring never calls the system again), and how to
summarise the stored scores for ``report/summary.json``.

The contract is generic in the context a protocol receives (``RunContext`` in a run): the
context holds the running protocol, so naming it here would make the two modules import each
other. ``EvaluationProtocol[RunContext]`` is the type the runner uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, TypeAlias, TypeVar

from voxeval.registry import Kind
from voxeval.scoring.score import Score

ContextT = TypeVar("ContextT", contravariant=True)

SystemSummary: TypeAlias = dict[str, Any]
"""One system's entry of ``summary.json``: ``overall``, ``by_category``, ``by_condition``,
``not_run``, ``units`` and whatever the protocol adds (pass^k curves, judge accounting...)."""


@dataclass(frozen=True, order=True)
class WorkUnit:
    """One (item, system, trial, condition) cell of the plan.

    ``category`` is the item's reporting group (e.g. WildSpeech task type or scenario kind).
    """

    item_id: str
    system: str
    trial: int = 0
    condition: str = "clean"
    category: str = ""

    @property
    def key(self) -> str:
        return f"{self.item_id}|{self.condition}|{self.system}|{self.trial}"


class EvaluationProtocol(Protocol[ContextT]):
    name: ClassVar[str]
    # The record its metrics score (a metric applies when its first parameter is this type).
    record_type: ClassVar[type]
    # The capability it needs of a system (``voxeval.systems.base``: ``reply`` or ``call``).
    system_needs: ClassVar[str]

    def plan(self, ctx: ContextT) -> list[WorkUnit]:
        """Load (and if needed build) the suite; return every unit, in a stable order."""
        ...

    def interact(self, unit: WorkUnit, ctx: ContextT) -> None:
        """Run the system on the unit and write its artifacts to ``ctx.store.unit_dir(unit)``.

        When the system under test fails, store the fault with the artifacts (so ``score``
        can score the failure) and raise ``SystemFault``: the unit is then scored and done.
        Raise ``HarnessFault`` when a part on our side fails (simulator, renderer): the
        runner retries the interaction, then fails the unit with that cause."""
        ...

    def score(self, unit: WorkUnit, ctx: ContextT, metrics: list[str] | None) -> dict[str, Score]:
        """Score a finished unit from stored artifacts only. ``None`` = the protocol's defaults.
        A unit whose system failed gets each metric's failure score
        (``voxeval.scoring.system_fault``); a metric that cannot be computed because of a
        transient fault on our side is ``Score.pending_retry``."""
        ...

    def summarize(self, ctx: ContextT) -> dict[str, SystemSummary]:
        """Per-system summary: ``{system: {"overall": {metric: stat}, "by_category": ...,
        "by_condition": ..., "not_run": {metric: reason}, ...}}`` where ``stat`` is
        ``{"mean", "ci_low", "ci_high", "n"}``."""
        ...


# Protocol classes by name; a class is instantiated without arguments.
PROTOCOLS: Kind[type[EvaluationProtocol[Any]]] = Kind("protocol")
