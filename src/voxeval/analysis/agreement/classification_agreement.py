"""How well a binary rater (a judge) agrees with known labels: the confusion counts, accuracy
(with a Wilson interval on the effective number of independent units), precision, recall and
F1 of the positive class, and Cohen's kappa (``statsmodels``).

The positive class is "defect present" (the judge should flag it). Kappa corrects accuracy
for the agreement a rater gets by chance from the class frequencies alone: a rater that always
gives the same answer has kappa 0 whatever its accuracy; perfect agreement is 1. When both the
labels and the answers are one class only, agreement by chance is already perfect and kappa is
undefined (None), as are precision, recall and F1 when their denominators are empty.

Every agreement figure has an interval. Kappa's interval maps the accuracy interval (Wilson on
the clustered effective n) through kappa = (accuracy - chance) / (1 - chance) with the chance
agreement of the observed table: so a perfect judge on a small set gets a wide kappa interval,
as its accuracy interval is wide, never a certain 1. ``fitness`` then says in plain words
whether the set can tell a fit judge (kappa >= ``FIT_KAPPA``) from an unfit one."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from statsmodels.stats.inter_rater import cohens_kappa

from voxeval.analysis.bootstrap import DEFAULT_CONFIDENCE
from voxeval.analysis.proportion import rate_stats

# the rule of thumb the docs give: below this kappa a judge's scores are not trusted
FIT_KAPPA = 0.6


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


def chance_agreement(table: np.ndarray) -> float | None:
    """The agreement two raters with these class frequencies reach by chance."""
    n = float(table.sum())
    if n == 0:
        return None
    return float((table.sum(axis=1) * table.sum(axis=0)).sum()) / n**2


def kappa_from_accuracy(accuracy: float, chance: float) -> float:
    """Kappa of a 2-class table with observed agreement ``accuracy`` and chance agreement
    ``chance`` (clipped to [-1, 1])."""
    return max(-1.0, min(1.0, (accuracy - chance) / (1.0 - chance)))


def kappa_interval(
    counts: ConfusionCounts, accuracy_ci: Sequence[float] | None
) -> list[float] | None:
    """The kappa interval: the accuracy interval's ends mapped through the chance agreement of
    the observed table; None where kappa is undefined."""
    chance = chance_agreement(counts.table())
    if accuracy_ci is None or chance is None or math.isclose(chance, 1.0):
        return None
    return [
        kappa_from_accuracy(accuracy_ci[0], chance),
        kappa_from_accuracy(accuracy_ci[1], chance),
    ]


def perfect_judge_kappa_low(
    positives: int,
    n: int,
    clusters: Sequence[Hashable] | None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> float:
    """The lower end of the kappa interval a judge agreeing on every one of ``n`` items
    (``positives`` of them defects, grouped by ``clusters``) would get: below ``FIT_KAPPA``, the
    set cannot show any judge fit."""
    base = positives / n
    perfect = rate_stats([True] * n, clusters=clusters, confidence=confidence)
    return kappa_from_accuracy(float(perfect["ci_low"]), base**2 + (1 - base) ** 2)


def fitness(
    counts: ConfusionCounts,
    kappa_ci: Sequence[float] | None,
    clusters: Sequence[Hashable] | None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> tuple[str, str]:
    """(verdict, plain statement): ``fit`` when the whole kappa interval is at or above
    ``FIT_KAPPA``, ``unfit`` when it is below, else ``undecided``. The set itself is judged
    first: when even a judge agreeing on every item would have a kappa interval reaching below
    ``FIT_KAPPA``, the set is too small to tell a fit judge from an unfit one."""
    positives, n = counts.tp + counts.fn, counts.n
    if n == 0 or positives in (0, n):
        return "undecided", (
            f"cannot tell: the {n} labelled item(s) are all of one class, so kappa is undefined"
        )
    perfect_low = perfect_judge_kappa_low(positives, n, clusters, confidence)
    if perfect_low < FIT_KAPPA:
        return "undecided", (
            f"too small to tell a fit judge from an unfit one: with {n} items ({positives} "
            f"defects) even a judge agreeing on every item would have a kappa interval "
            f"reaching {perfect_low:.2f}, below {FIT_KAPPA}"
        )
    if kappa_ci is None:
        return "undecided", "cannot tell: kappa is undefined (the judge gave one answer only)"
    low, high = kappa_ci
    if low >= FIT_KAPPA:
        return "fit", f"fit: the kappa interval [{low:.2f}, {high:.2f}] is above {FIT_KAPPA}"
    if high < FIT_KAPPA:
        return "unfit", f"unfit: the kappa interval [{low:.2f}, {high:.2f}] is below {FIT_KAPPA}"
    return "undecided", (
        f"cannot tell: the kappa interval [{low:.2f}, {high:.2f}] spans {FIT_KAPPA}; "
        "more labelled items would decide"
    )


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
    accuracy_ci = (
        [accuracy["ci_low"], accuracy["ci_high"]]
        if accuracy is not None and accuracy.get("ci_low") is not None
        else None
    )
    kappa_ci = kappa_interval(counts, accuracy_ci) if kappa(counts) is not None else None
    verdict, statement = fitness(counts, kappa_ci, clusters, confidence)
    return {
        "n": counts.n,
        "positives": counts.tp + counts.fn,
        "base_rate": _ratio(counts.tp + counts.fn, counts.n),
        "accuracy": _ratio(counts.tp + counts.tn, counts.n),
        "accuracy_ci": accuracy_ci,
        "precision": _ratio(counts.tp, counts.tp + counts.fp),
        "recall": _ratio(counts.tp, counts.tp + counts.fn),
        "f1": f1_score(counts),
        "kappa": kappa(counts),
        "kappa_ci": kappa_ci,
        "verdict": verdict,  # fit / unfit / undecided (see ``fitness``)
        "statement": statement,
        "confusion": asdict(counts),
    }
