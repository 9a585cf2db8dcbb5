"""Pair one system's scores of one metric in two runs, item by item.

An item here is an (item id, condition) cell; its value in a run is the mean over the trials
whose score ran. The system's failures count as the run's summary counts them: a unit whose
system under test failed is done and holds the metric's failure value, so it is paired like
any other. A cell without a value on one side is *unpaired* and listed with the reason (the
unit failed on voxeval's side and with which cause, it has not finished, the score did not
run or is pending, or the run has no such unit) so nothing disappears silently.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from voxeval.store.records import ScoreRow, UnitRecord

Cell = tuple[str, str]  # (item id, condition)


@dataclass
class SideValues:
    """One run's view of one (system, metric): values per cell, and why cells have none."""

    values: dict[Cell, list[float]] = field(default_factory=dict)
    not_ran: dict[Cell, list[str]] = field(default_factory=dict)
    unit_status: dict[Cell, list[UnitRecord]] = field(default_factory=dict)

    def mean(self, cell: Cell) -> float | None:
        values = self.values.get(cell)
        return math.fsum(values) / len(values) if values else None

    def reason(self, cell: Cell) -> str:
        """Why ``cell`` has no value in this run."""
        units = self.unit_status.get(cell) or []
        if not units:
            return "missing: no such unit in the run"
        failed = [u for u in units if u.status == "failed"]
        if failed and len(failed) == len(units):
            causes = Counter(u.cause or "unknown" for u in failed)
            listed = ", ".join(f"{c} {n}" for c, n in sorted(causes.items()))
            return f"failed: the unit failed on voxeval's side ({listed})"
        if any(u.status not in ("done", "failed") for u in units):
            return "not_finished: the unit has not finished"
        reasons = self.not_ran.get(cell) or []
        if reasons:
            return Counter(reasons).most_common(1)[0][0]
        return "not_run: no score stored for this metric"


def side_values(
    rows: Iterable[ScoreRow], units: Iterable[UnitRecord], system: str, metric: str
) -> SideValues:
    side = SideValues()
    for unit in units:
        if unit.system == system:
            side.unit_status.setdefault((unit.item_id, unit.condition), []).append(unit)
    for row in rows:
        if row.system != system or row.metric != metric:
            continue
        cell = (row.item_id, row.condition)
        if row.ran:
            side.values.setdefault(cell, []).append(float(row.value))  # type: ignore[arg-type]
        elif row.pending:
            side.not_ran.setdefault(cell, []).append(f"pending: {row.error or 'to retry'}")
        else:
            side.not_ran.setdefault(cell, []).append(f"not_run: {row.error or 'no value'}")
    return side


@dataclass
class PairedItems:
    """Cells scored in both runs and the ones that are not."""

    items: list[dict[str, object]]  # item_id, condition, cluster, baseline, value, delta, trials
    cluster_deltas: dict[str, float]  # independent unit -> mean delta of its paired cells
    unpaired: list[dict[str, str]]  # item_id, condition, run, reason

    def unpaired_counts(self) -> dict[str, dict[str, int]]:
        """``{run: {reason kind: count}}`` (kind: failed, not_finished, not_run, pending,
        missing)."""
        out: dict[str, dict[str, int]] = defaultdict(dict)
        for entry in self.unpaired:
            kind = entry["reason"].split(":", 1)[0]
            out[entry["run"]][kind] = out[entry["run"]].get(kind, 0) + 1
        return {run: dict(sorted(kinds.items())) for run, kinds in out.items()}


def pair_items(
    baseline: SideValues,
    other: SideValues,
    cluster_of: Callable[[str, str], str],
    names: Sequence[str],
) -> PairedItems:
    """Pair ``baseline`` and ``other`` (run names ``names = (baseline, other)``) cell by cell;
    deltas are other - baseline. Cells are in sorted order, so the result does not depend on
    the order rows were stored in."""
    cells = sorted(
        set(baseline.values) | set(other.values) | set(baseline.unit_status)
        | set(other.unit_status)
    )  # fmt: skip
    items: list[dict[str, object]] = []
    unpaired: list[dict[str, str]] = []
    per_cluster: dict[str, list[float]] = defaultdict(list)
    for cell in cells:
        a, b = baseline.mean(cell), other.mean(cell)
        if a is None or b is None:
            for side, name, value in ((baseline, names[0], a), (other, names[1], b)):
                if value is None:
                    unpaired.append(
                        {"item_id": cell[0], "condition": cell[1], "run": name,
                         "reason": side.reason(cell)}
                    )  # fmt: skip
            continue
        cluster = cluster_of(*cell)
        delta = b - a
        per_cluster[cluster].append(delta)
        items.append(
            {
                "item_id": cell[0],
                "condition": cell[1],
                "cluster": cluster,
                "baseline": a,
                "value": b,
                "delta": delta,
                "trials": [len(baseline.values[cell]), len(other.values[cell])],
            }
        )
    cluster_deltas = {c: math.fsum(d) / len(d) for c, d in sorted(per_cluster.items())}
    return PairedItems(items=items, cluster_deltas=cluster_deltas, unpaired=unpaired)
