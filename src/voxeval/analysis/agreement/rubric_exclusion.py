"""Bootstrap rubric exclusion: is the rubric ranking carried by a few criteria?

From one rater's binary rubric values, each resample drops a random share of the rubric
criteria, recomputes every system's score from the rest (S_case = mean of the kept criteria of
a case, score = mean of S_case over the cases that kept at least one criterion) and measures
Spearman's rho of the new scores against the full-rubric scores and against a given arena
ranking (any rating by system). The mean and the percentile interval of each rho over the
resamples are reported; a resample whose scores are all equal has no rho and is counted apart.

The dropped unit is ``"item_criterion"`` by default - each criterion of each item is its own
rubric, since sample-level criteria ids (``criteria_d_1``) mean different things on different
items - or ``"criterion"``: one criterion id dropped on every item at once (for criteria shared
by all items, such as the general level). The paper removes rubrics "progressively" with 5,000
resamples per condition without giving the shares in its text; ``DEFAULT_FRACTIONS`` is ours.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, TypedDict, Unpack

import numpy as np
from scipy import stats

from voxeval.analysis.bootstrap import DEFAULT_CONFIDENCE
from voxeval.analysis.rubric_values import RubricValue

DEFAULT_EXCLUSION_RESAMPLES = 5_000
DEFAULT_FRACTIONS = (0.1, 0.2, 0.3, 0.4, 0.5)
DEFAULT_FRACTION = 0.2
DropUnit = Literal["item_criterion", "criterion"]
_BATCH = 256  # resamples scored at once (bounds the memory of the masked value cube)


class _RubricTable:
    """Values as a (system x rubric cell) matrix, cells sorted by item."""

    def __init__(self, values: Iterable[RubricValue], unit: DropUnit) -> None:
        rows = list(values)
        if not rows:
            raise ValueError("rubric exclusion needs rubric values")
        raters = {v.rater for v in rows}
        if len(raters) > 1:
            raise ValueError(f"rubric exclusion takes one rater's values, got {sorted(raters)}")
        self.systems = sorted({v.system for v in rows})
        cells = sorted({(v.item, v.criterion) for v in rows})
        cell_index = {cell: i for i, cell in enumerate(cells)}
        system_index = {s: i for i, s in enumerate(self.systems)}
        self.values = np.full((len(self.systems), len(cells)), np.nan)
        for v in rows:
            at = system_index[v.system], cell_index[(v.item, v.criterion)]
            if not np.isnan(self.values[at]):
                raise ValueError(
                    f"two values for system {v.system!r}, item {v.item!r}, criterion "
                    f"{v.criterion!r}"
                )
            self.values[at] = v.value
        self.present = ~np.isnan(self.values)
        self.filled = np.nan_to_num(self.values)
        items = [item for item, _ in cells]
        self.item_starts = np.flatnonzero(
            [i == 0 or items[i] != items[i - 1] for i in range(len(items))]
        )
        if unit == "item_criterion":
            self.units = [f"{item}/{criterion}" for item, criterion in cells]
            self.unit_of_cell = np.arange(len(cells))
        elif unit == "criterion":
            self.units = sorted({criterion for _, criterion in cells})
            unit_index = {c: i for i, c in enumerate(self.units)}
            self.unit_of_cell = np.asarray([unit_index[c] for _, c in cells])
        else:
            raise ValueError(f"unit must be 'item_criterion' or 'criterion', not {unit!r}")

    def scores(self, keep_cells: np.ndarray) -> np.ndarray:
        """Scores (resamples x systems) for boolean masks of kept cells (resamples x cells)."""
        kept = keep_cells[:, None, :] & self.present[None, :, :]
        sums = np.add.reduceat(np.where(kept, self.filled[None], 0.0), self.item_starts, axis=2)
        counts = np.add.reduceat(kept.astype(float), self.item_starts, axis=2)
        case_scores = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
        with warnings.catch_warnings():
            # A system with no kept criterion anywhere has no score (NaN, no rho): expected.
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.nanmean(case_scores, axis=2)


def _spearman_rows(scores: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Spearman's rho of each row of ``scores`` with ``reference`` (NaN when undefined)."""
    valid = np.isfinite(scores).all(axis=1)
    out = np.full(scores.shape[0], np.nan)
    if not valid.any():
        return out
    ranks = stats.rankdata(scores[valid], axis=1)
    ref = stats.rankdata(reference)
    ranks -= ranks.mean(axis=1, keepdims=True)
    ref = ref - ref.mean()
    denominator = np.sqrt((ranks**2).sum(axis=1) * (ref**2).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        out[valid] = np.where(denominator > 0, ranks @ ref / denominator, np.nan)
    return out


class RhoSummary(TypedDict):
    """Mean and percentile interval of the resampled Spearman rhos that are defined."""

    mean: float | None
    ci_low: float | None
    ci_high: float | None
    n_defined: int


class ArenaRho(RhoSummary):
    systems: list[str]
    full_rho: float | None


class RubricExclusion(TypedDict):
    fraction: float
    unit: DropUnit
    units: int
    dropped_per_resample: int
    resamples: int
    seed: int
    confidence: float
    full_scores: dict[str, float]
    vs_full: RhoSummary
    vs_arena: ArenaRho | None


class ExclusionOptions(TypedDict, total=False):
    """``rubric_exclusion``'s settings other than the fraction (``rubric_exclusion_curve``)."""

    arena_ranking: Mapping[str, float] | None
    unit: DropUnit
    resamples: int
    seed: int
    confidence: float


def _summary(rhos: np.ndarray, confidence: float) -> RhoSummary:
    defined = rhos[np.isfinite(rhos)]
    alpha = (1.0 - confidence) / 2
    if defined.size == 0:
        return {"mean": None, "ci_low": None, "ci_high": None, "n_defined": 0}
    low, high = np.quantile(defined, [alpha, 1.0 - alpha])
    return {
        "mean": float(defined.mean()),
        "ci_low": float(low),
        "ci_high": float(high),
        "n_defined": int(defined.size),
    }


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def rubric_exclusion(
    values: Iterable[RubricValue],
    *,
    arena_ranking: Mapping[str, float] | None = None,
    fraction: float = DEFAULT_FRACTION,
    unit: DropUnit = "item_criterion",
    resamples: int = DEFAULT_EXCLUSION_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_CONFIDENCE,
) -> RubricExclusion:
    """Spearman of the rankings without a random ``fraction`` of the rubric units against
    the full ranking and against ``arena_ranking`` (over the systems it shares)."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"fraction of criteria to drop must be in (0, 1), not {fraction}")
    table = _RubricTable(values, unit)
    n_units = len(table.units)
    if n_units < 2:
        raise ValueError(f"rubric exclusion needs at least 2 rubric units ({unit}), got {n_units}")
    n_drop = min(max(1, round(fraction * n_units)), n_units - 1)
    full = table.scores(np.ones((1, table.values.shape[1]), dtype=bool))[0]
    arena_systems = [s for s in table.systems if arena_ranking is not None and s in arena_ranking]
    arena_columns = [table.systems.index(s) for s in arena_systems]
    arena_reference = (
        np.asarray([float(arena_ranking[s]) for s in arena_systems]) if arena_ranking else None
    )
    with_arena = len(arena_columns) >= 3
    reference = arena_reference if arena_reference is not None else np.zeros(0)
    rng = np.random.default_rng(seed)
    vs_full: list[np.ndarray] = []
    vs_arena: list[np.ndarray] = []
    done = 0
    while done < resamples:
        batch = min(_BATCH, resamples - done)
        dropped_units = np.argsort(rng.random((batch, n_units)), axis=1)[:, :n_drop]
        keep_units = np.ones((batch, n_units), dtype=bool)
        np.put_along_axis(keep_units, dropped_units, False, axis=1)
        scores = table.scores(keep_units[:, table.unit_of_cell])
        vs_full.append(_spearman_rows(scores, full))
        if with_arena:
            vs_arena.append(_spearman_rows(scores[:, arena_columns], reference))
        done += batch
    arena_result: ArenaRho | None = None
    if arena_ranking is not None:
        arena_result = {
            **_summary(np.concatenate(vs_arena) if vs_arena else np.array([]), confidence),
            "systems": arena_systems,
            "full_rho": (
                _finite(_spearman_rows(full[arena_columns][None], reference)[0])
                if with_arena
                else None
            ),
        }
    return {
        "fraction": fraction,
        "unit": unit,
        "units": n_units,
        "dropped_per_resample": n_drop,
        "resamples": resamples,
        "seed": seed,
        "confidence": confidence,
        "full_scores": {s: float(x) for s, x in zip(table.systems, full, strict=True)},
        "vs_full": _summary(np.concatenate(vs_full), confidence),
        "vs_arena": arena_result,
    }


def rubric_exclusion_curve(
    values: Iterable[RubricValue],
    *,
    fractions: Sequence[float] = DEFAULT_FRACTIONS,
    **options: Unpack[ExclusionOptions],
) -> list[RubricExclusion]:
    """``rubric_exclusion`` at each share of dropped criteria (same seed for each)."""
    rows = list(values)
    return [rubric_exclusion(rows, fraction=f, **options) for f in fractions]
