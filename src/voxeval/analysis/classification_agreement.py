"""How well a binary rater (a judge) agrees with known labels: the confusion counts, accuracy
(with a Wilson interval on the effective number of independent units), precision, recall and
F1 of the positive class, and Cohen's kappa (``statsmodels``).

The positive class is "defect present" (the judge should flag it). Kappa corrects accuracy
for the agreement a rater gets by chance from the class frequencies alone: a rater that always
gives the same answer has kappa 0 whatever its accuracy; perfect agreement is 1. When both the
labels and the answers are one class only, agreement by chance is already perfect and kappa is
undefined (None), as are precision, recall and F1 when their denominators are empty."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from statsmodels.stats.inter_rater import cohens_kappa

from voxeval.analysis.bootstrap import DEFAULT_CONFIDENCE
from voxeval.analysis.proportion import rate_stats


@dataclass(frozen=True)
class ConfusionCounts:
    """``tp``: defect flagged; ``fn``: defect missed; ``fp``: clean flagged; ``tn``: clean
    passed."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    def table(self) -> np.ndarray:
        """Rows: the label (positive, negative); columns: the rater (positive, negative)."""
        return np.array([[self.tp, self.fn], [self.fp, self.tn]], dtype=float)


def confusion_counts(truth: Sequence[bool], predicted: Sequence[bool]) -> ConfusionCounts:
    if len(truth) != len(predicted):
        raise ValueError(f"{len(truth)} labels but {len(predicted)} answers")
    pairs = list(zip((bool(t) for t in truth), (bool(p) for p in predicted), strict=True))
    return ConfusionCounts(
        tp=sum(t and p for t, p in pairs),
        fp=sum(p and not t for t, p in pairs),
        fn=sum(t and not p for t, p in pairs),
        tn=sum(not t and not p for t, p in pairs),
    )


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator else None


def table_kappa(table: np.ndarray) -> float | None:
    """Cohen's kappa of a square agreement table (rows: one rater's classes, columns: the
    other's, same order); None when it is undefined (no examples, or chance agreement
    already 1 because both sides used one and the same class only)."""
    n = float(table.sum())
    if n == 0:
        return None
    chance = float((table.sum(axis=1) * table.sum(axis=0)).sum()) / n**2
    if math.isclose(chance, 1.0):
        return None
    value = float(cohens_kappa(table, return_results=False))
    return value if math.isfinite(value) else None


def kappa(counts: ConfusionCounts) -> float | None:
    """Cohen's kappa of the 2x2 table (see ``table_kappa``)."""
    return table_kappa(counts.table())


def label_kappa(
    first: Sequence[Hashable], second: Sequence[Hashable]
) -> tuple[float | None, dict[str, Any]]:
    """Cohen's kappa between two raters' class labels of the same examples (any number of
    classes), with the agreement table ``{"classes", "table"}`` it was computed from."""
    if len(first) != len(second):
        raise ValueError(f"{len(first)} labels from one rater but {len(second)} from the other")
    classes = sorted({*first, *second}, key=str)
    index = {label: i for i, label in enumerate(classes)}
    table = np.zeros((len(classes), len(classes)), dtype=float)
    for a, b in zip(first, second, strict=True):
        table[index[a], index[b]] += 1
    return table_kappa(table), {"classes": [str(c) for c in classes], "table": table.tolist()}


def f1_score(counts: ConfusionCounts) -> float | None:
    """F1 of the positive (defect) class: 2 TP / (2 TP + FP + FN); None without any
    positive label or answer."""
    return _ratio(2 * counts.tp, 2 * counts.tp + counts.fp + counts.fn)


def classification_agreement(
    truth: Sequence[bool],
    predicted: Sequence[bool],
    *,
    clusters: Sequence[Hashable] | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> dict[str, Any]:
    """Agreement of ``predicted`` with ``truth`` (True = defect). ``clusters`` gives each
    example's independent unit (examples built from one scenario are correlated); the
    accuracy interval is a Wilson interval on the clustered effective n."""
    counts = confusion_counts(truth, predicted)
    correct = [bool(t) == bool(p) for t, p in zip(truth, predicted, strict=True)]
    accuracy = rate_stats(correct, clusters=clusters, confidence=confidence) if correct else None
    return {
        "n": counts.n,
        "positives": counts.tp + counts.fn,
        "base_rate": _ratio(counts.tp + counts.fn, counts.n),
        "accuracy": _ratio(counts.tp + counts.tn, counts.n),
        "accuracy_ci": (
            [accuracy["ci_low"], accuracy["ci_high"]]
            if accuracy is not None and accuracy.get("ci_low") is not None
            else None
        ),
        "precision": _ratio(counts.tp, counts.tp + counts.fp),
        "recall": _ratio(counts.tp, counts.tp + counts.fn),
        "f1": f1_score(counts),
        "kappa": kappa(counts),
        "confusion": asdict(counts),
    }
