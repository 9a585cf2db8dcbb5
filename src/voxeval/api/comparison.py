"""One comparison across systems (the optional comparison steps of a protocol).

``score`` looks at one unit; a comparison looks at several stored units together (the same
item, condition and trial answered by systems A and B) and gives one result, e.g. a pairwise
verdict per metric or, for the multi-turn arena, a judge's vote. A protocol declares its steps
in ``EvaluationProtocol.comparison_steps`` and implements the comparison hooks of the base
(``voxeval.api.protocol``). ``compare`` reads only stored artifacts and scores of its units:
it never calls a system, so comparisons can be re-run from a finished run folder.
"""

from __future__ import annotations

from dataclasses import dataclass

from voxeval.api.work_unit import WorkUnit


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
