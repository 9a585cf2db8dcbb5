"""Whether a run folder holds a complete evaluation, and the exit code that says so."""

from __future__ import annotations

from dataclasses import dataclass, field

from voxeval.store import RunStore
from voxeval.store.records import UnitRecord


@dataclass(frozen=True)
class RunHealth:
    """Whether a run folder holds a complete evaluation: units that failed on our side (by
    cause), units whose system under test failed (scored as failures, by cause), and scores
    still pending."""

    failed: dict[str, list[UnitRecord]]
    system_faults: dict[str, int]
    pending_scores: int
    # comparison steps across systems: {step: {"pending": n, "failed": n, "not_run": n}}
    comparisons_not_done: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def failed_units(self) -> int:
        return sum(len(units) for units in self.failed.values())

    @property
    def system_fault_units(self) -> int:
        return sum(self.system_faults.values())

    @property
    def incomplete_comparisons(self) -> int:
        return sum(n for counts in self.comparisons_not_done.values() for n in counts.values())

    def exit_code(self, max_failures: int = 0) -> int:
        """0 when every unit ran, every score and comparison is in and at most
        ``max_failures`` units are failures of the systems under test; else 1."""
        incomplete = self.failed_units or self.pending_scores or self.incomplete_comparisons
        return 1 if incomplete or self.system_fault_units > max_failures else 0


def run_health(store: RunStore) -> RunHealth:
    failed: dict[str, list[UnitRecord]] = {}
    faults: dict[str, int] = {}
    for unit in store.units.records():
        if unit.status == "failed":
            failed.setdefault(unit.cause or "unknown", []).append(unit)
        elif unit.status == "done" and unit.system_fault:
            faults[unit.system_fault] = faults.get(unit.system_fault, 0) + 1
    pending = sum(len(m) for m in store.scores.pending_metrics().values())
    not_done = {
        step: {status: n for status, n in counts.items() if status != "done" and n}
        for step, counts in store.comparisons.counts().items()
    }
    return RunHealth(failed, faults, pending, {s: c for s, c in not_done.items() if c})
