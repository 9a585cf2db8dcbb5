"""The optional part of the protocol contract: comparison steps across systems.

``score`` looks at one unit; a comparison looks at several stored units together (the same
item, condition and trial answered by systems A and B) and gives one result, e.g. a pairwise
verdict per metric or, for the multi-turn arena, a judge's vote. A protocol that declares
comparison steps implements ``ComparingProtocol`` next to ``EvaluationProtocol``; protocols
without them run unchanged. ``compare`` reads only stored artifacts and scores of its units:
it never calls a system, so comparisons can be re-run from a finished run folder.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

from voxeval.config import RunConfig
from voxeval.protocols.context import RunContext
from voxeval.protocols.contract import WorkUnit
from voxeval.scoring.comparison_result import ComparisonResult


@dataclass(frozen=True)
class Comparison:
    """One comparison of step ``step``: a stable ``key`` (unique within the step, the same
    on every run of the plan) and the units it reads, in the step's order (A, B, ...)."""

    step: str
    key: str
    units: tuple[WorkUnit, ...]

    @property
    def unit_keys(self) -> tuple[str, ...]:
        return tuple(unit.key for unit in self.units)


@runtime_checkable
class ComparingProtocol(Protocol):
    """What a protocol implements to declare comparison steps."""

    comparison_steps: ClassVar[tuple[str, ...]]
    """Every step name the protocol knows (the config's ``comparisons`` must use these)."""

    def default_comparisons(self, config: RunConfig) -> list[str]:
        """The steps run when the config has no ``comparisons`` key."""
        ...

    def check_comparisons(self, config: RunConfig, steps: Sequence[str]) -> list[str]:
        """Problems with running ``steps`` for ``config`` (e.g. one system only), as
        messages about the ``comparisons`` field; empty when fine."""
        ...

    def comparisons(
        self, ctx: RunContext, steps: Sequence[str], units: Sequence[WorkUnit]
    ) -> list[Comparison]:
        """Every comparison of ``steps`` over the planned ``units``, in a stable order."""
        ...

    def compare(self, comparison: Comparison, ctx: RunContext) -> ComparisonResult:
        """The result of one comparison whose units are all done, from stored artifacts and
        scores only. A transient fault on our side (a judge down, an input score pending) is
        ``ComparisonResult.pending_retry``; one that cannot be fixed by retrying is
        ``ComparisonResult.failed`` with its cause. The runner records an exception as a
        failure on our side."""
        ...

    def summarize_comparisons(self, ctx: RunContext) -> dict[str, Any]:
        """``{step: summary}`` of the stored results, for ``report/summary.json``."""
        ...
