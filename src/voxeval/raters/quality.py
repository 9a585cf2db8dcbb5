"""Quality control of a study's raters: gold accuracy, agreement with the other raters, and a
statistical test that flags raters who agree with the others far less than the pool does.

Units and labels: an arena unit is an item, its label the winner (a system name, ``tie`` or
``both_bad``, so the per-rater A/B swap does not matter); a rubric unit is one criterion of
one item, its label 0 / 1; a score unit is an item, its label the 1-10 score. Record answers
have no label to agree on (only their count is reported). Gold items are kept apart: they
measure attention, not agreement.

Per rater, for each unit it rated that at least one other rater rated too, the reference is
the leave-one-out answer of the others: their majority label (nominal tasks; a tied majority
gives no reference and the unit is skipped), or their median score (the score task, where
"agreeing" means within one point, as ten-point scales are seldom matched exactly). Cohen's
kappa compares the rater's labels with those references (statsmodels; quadratic weights for
scores), so a rater who always answers the same gets no credit for the common answer.

Outlier test: a one-sided exact binomial test (scipy) of the rater's agreements against the
agreement rate of all other raters pooled (leave-one-out, so a bad rater does not lower its
own bar), Holm-corrected over the raters tested (statsmodels). Why this test: agreement
counts are small whole numbers with a natural null (the pool's rate), which the exact
binomial handles at any size where a z-score would not; Holm keeps the chance of flagging
any good rater below ``alpha`` without assuming the tests are independent. A rater is also
flagged when it answered at least ``min_gold`` gold items and got fewer than
``min_gold_accuracy`` of them right.

Fleiss' kappa (statsmodels) over all raters: it needs the same number of ratings per unit,
so it uses the most common count k (>= 2) and, for units with more, their first k ratings in
submission order; the count of units used is reported with it.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
from scipy.stats import binomtest
from sqlalchemy import Engine, select
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa
from statsmodels.stats.multitest import multipletests

from voxeval.analysis.agreement.classification_agreement import label_kappa
from voxeval.json_types import JSONObject
from voxeval.raters.export.export_db import ResponseRow, load_items, load_responses
from voxeval.raters.gold_check import gold_correct
from voxeval.raters.schema import studies_table
from voxeval.raters.study.study_files import StudyItem

DEFAULT_ALPHA = 0.05
DEFAULT_MIN_GOLD = 2
DEFAULT_MIN_GOLD_ACCURACY = 0.5
SCORE_TOLERANCE = 1.0
AGREEMENT_OUTLIER = "agreement_outlier"
FAILED_GOLD = "failed_gold"


@dataclass(frozen=True)
class Rating:
    """One label one rater gave one unit; ``order`` is its submission order."""

    rater: str
    unit: str
    label: Hashable
    order: int = 0


@dataclass(frozen=True)
class GoldAnswer:
    rater: str
    item: str
    correct: bool


@dataclass(frozen=True)
class RaterQuality:
    rater_id: str
    responses: int  # answers to normal items
    gold_answered: int
    gold_correct: int
    gold_accuracy: float | None
    compared: int  # units with a leave-one-out reference
    agreed: int
    agreement: float | None
    kappa: float | None
    pool_agreement: float | None  # the other raters' agreement rate (the test's null)
    p_value: float | None  # one-sided binomial, agreement below the pool's
    p_holm: float | None
    flags: tuple[str, ...] = ()

    @property
    def flagged(self) -> bool:
        return bool(self.flags)

    def to_dict(self) -> JSONObject:
        return {**asdict(self), "flags": list(self.flags), "flagged": self.flagged}


@dataclass(frozen=True)
class StudyQuality:
    task: str
    raters: list[RaterQuality]
    fleiss_kappa: float | None
    fleiss_units: int
    fleiss_ratings_per_unit: int | None
    alpha: float
    scale: str  # nominal | ordinal
    notes: list[str] = field(default_factory=list)

    def flagged(self) -> set[str]:
        return {r.rater_id for r in self.raters if r.flagged}

    def to_dict(self) -> JSONObject:
        return {
            "task": self.task,
            "scale": self.scale,
            "alpha": self.alpha,
            "fleiss_kappa": self.fleiss_kappa,
            "fleiss_units": self.fleiss_units,
            "fleiss_ratings_per_unit": self.fleiss_ratings_per_unit,
            "flagged": [*sorted(self.flagged())],
            "raters": [r.to_dict() for r in self.raters],
            "notes": [*self.notes],
        }


def _majority(labels: Sequence[Hashable]) -> Hashable | None:
    counts = Counter(labels).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


def _reference(others: Sequence[Hashable], ordinal: bool) -> Hashable | None:
    if not others:
        return None
    if ordinal:
        return statistics.median_low(sorted(others))  # type: ignore[type-var]
    return _majority(others)


def _agrees(label: Hashable, reference: Hashable, ordinal: bool) -> bool:
    if ordinal:
        return abs(float(label) - float(reference)) <= SCORE_TOLERANCE  # type: ignore[arg-type]
    return label == reference


def _ordinal_kappa(mine: Sequence[Hashable], refs: Sequence[Hashable]) -> float | None:
    classes = sorted({*mine, *refs}, key=float)  # type: ignore[arg-type]
    if len(classes) < 2:
        return None
    index = {c: i for i, c in enumerate(classes)}
    table = np.zeros((len(classes), len(classes)))
    for a, b in zip(mine, refs, strict=True):
        table[index[a], index[b]] += 1
    try:
        value = float(cohens_kappa(table, wt="quadratic", return_results=False))
    except (ValueError, ZeroDivisionError):
        return None
    return value if np.isfinite(value) else None


def _fleiss(ratings: Sequence[Rating]) -> tuple[float | None, int, int | None]:
    by_unit: dict[str, list[Rating]] = defaultdict(list)
    for rating in ratings:
        by_unit[rating.unit].append(rating)
    counts = Counter(len(v) for v in by_unit.values() if len(v) >= 2)
    if not counts:
        return None, 0, None
    k = max(counts.items(), key=lambda kv: (kv[1], kv[0]))[0]
    rows = [
        [r.label for r in sorted(v, key=lambda r: r.order)[:k]]
        for _, v in sorted(by_unit.items())
        if len(v) >= k
    ]
    classes = sorted({label for row in rows for label in row}, key=str)
    index = {c: i for i, c in enumerate(classes)}
    coded = np.array([[index[label] for label in row] for row in rows])
    if len(classes) < 2:
        return None, len(rows), k  # one class throughout: chance agreement is already total
    table, _ = aggregate_raters(coded, n_cat=len(classes))
    value = float(fleiss_kappa(table, method="fleiss"))
    return (value if np.isfinite(value) else None), len(rows), k


def assess_raters(
    task: str,
    ratings: Iterable[Rating],
    gold: Iterable[GoldAnswer] = (),
    *,
    raters: Iterable[str] = (),
    alpha: float = DEFAULT_ALPHA,
    min_gold: int = DEFAULT_MIN_GOLD,
    min_gold_accuracy: float = DEFAULT_MIN_GOLD_ACCURACY,
) -> StudyQuality:
    """Quality of every rater from its labels of normal units and its gold answers."""
    ratings = list(ratings)
    gold = list(gold)
    ordinal = task == "score"
    by_unit: dict[str, list[Rating]] = defaultdict(list)
    for rating in ratings:
        by_unit[rating.unit].append(rating)
    names = sorted({*raters, *(r.rater for r in ratings), *(g.rater for g in gold)})
    pairs: dict[str, list[tuple[Hashable, Hashable]]] = defaultdict(list)
    for unit_ratings in by_unit.values():
        for rating in unit_ratings:
            others = [r.label for r in unit_ratings if r.rater != rating.rater]
            reference = _reference(others, ordinal)
            if reference is not None:
                pairs[rating.rater].append((rating.label, reference))
    agreed = {
        name: sum(_agrees(label, ref, ordinal) for label, ref in pairs[name]) for name in names
    }
    compared = {name: len(pairs[name]) for name in names}
    p_values: dict[str, float] = {}
    pools: dict[str, float | None] = {}
    for name in names:
        pool_n = sum(compared[o] for o in names if o != name)
        pool_a = sum(agreed[o] for o in names if o != name)
        pools[name] = pool_a / pool_n if pool_n else None
        if compared[name] and pools[name] is not None:
            test = binomtest(agreed[name], compared[name], pools[name], alternative="less")
            p_values[name] = float(test.pvalue)
    tested = sorted(p_values)
    holm: dict[str, float] = {}
    if tested:
        _, adjusted, _, _ = multipletests([p_values[n] for n in tested], method="holm")
        holm = {n: float(p) for n, p in zip(tested, adjusted, strict=True)}
    out = []
    for name in names:
        mine = [label for label, _ in pairs[name]]
        refs = [ref for _, ref in pairs[name]]
        if not mine:
            kappa = None
        elif ordinal:
            kappa = _ordinal_kappa(mine, refs)
        else:
            kappa = label_kappa(mine, refs)[0]
        answers = [g for g in gold if g.rater == name]
        right = sum(g.correct for g in answers)
        accuracy = right / len(answers) if answers else None
        flags = []
        if name in holm and holm[name] < alpha:
            flags.append(AGREEMENT_OUTLIER)
        if len(answers) >= min_gold and accuracy is not None and accuracy < min_gold_accuracy:
            flags.append(FAILED_GOLD)
        out.append(
            RaterQuality(
                rater_id=name,
                responses=len({r.unit.split("|")[0] for r in ratings if r.rater == name}),
                gold_answered=len(answers),
                gold_correct=right,
                gold_accuracy=accuracy,
                compared=compared[name],
                agreed=agreed[name],
                agreement=agreed[name] / compared[name] if compared[name] else None,
                kappa=kappa,
                pool_agreement=pools[name],
                p_value=p_values.get(name),
                p_holm=holm.get(name),
                flags=tuple(flags),
            )
        )
    value, units, k = _fleiss(ratings)
    notes = []
    if task == "record":
        notes.append("record answers have no labels to agree on; only gold is checked")
    return StudyQuality(
        task=task,
        raters=out,
        fleiss_kappa=value,
        fleiss_units=units,
        fleiss_ratings_per_unit=k,
        alpha=alpha,
        scale="ordinal" if ordinal else "nominal",
        notes=notes,
    )


def arena_label(answer: JSONObject) -> str:
    """The winner named by system (or ``tie`` / ``both_bad``)."""
    winner = answer.get("winner")
    if winner:
        return str(winner)
    choice = answer.get("choice")
    if choice == "a":
        return str(answer["first"])
    if choice == "b":
        return str(answer["second"])
    return str(choice)


def ratings_of(task: str, responses: Sequence[ResponseRow]) -> list[Rating]:
    """The labels of ``responses`` (normal items only) as quality ``Rating``s."""
    out: list[Rating] = []
    for order, row in enumerate(responses):
        if task == "arena":
            out.append(Rating(row.rater_id, row.item_id, arena_label(row.answer), order))
        elif task == "rubric":
            for criterion, value in sorted((row.answer.get("criteria") or {}).items()):
                out.append(Rating(row.rater_id, f"{row.item_id}|{criterion}", int(value), order))
        elif task == "score":
            out.append(Rating(row.rater_id, row.item_id, int(row.answer["score"]), order))
    return out


def gold_answers(responses: Sequence[ResponseRow], items: dict[str, StudyItem]) -> list[GoldAnswer]:
    """Answers to gold items: the app's verdict when it stored one, else checked here."""
    out = []
    for row in responses:
        item = items.get(row.item_id)
        if item is None or item.kind != "gold":
            continue
        correct = row.gold_correct
        if correct is None:
            correct = gold_correct(item, row.answer)
        out.append(GoldAnswer(row.rater_id, row.item_id, bool(correct)))
    return out


def study_quality_of(
    task: str,
    responses: Sequence[ResponseRow],
    items: dict[str, StudyItem],
    *,
    raters: Iterable[str] = (),
    alpha: float = DEFAULT_ALPHA,
) -> StudyQuality:
    normal = [r for r in responses if r.item_id in items and items[r.item_id].kind != "gold"]
    return assess_raters(
        task,
        ratings_of(task, normal),
        gold_answers(responses, items),
        raters=[*raters, *(r.rater_id for r in normal)],
        alpha=alpha,
    )


def study_quality(engine: Engine, study_id: str, task: str) -> StudyQuality:
    items = load_items(engine, study_id)
    return study_quality_of(task, load_responses(engine, study_id), items)


def rater_quality(engine: Engine, study_id: str) -> list[RaterQuality]:
    """Per-rater quality of a study, for the admin page (the task is read from the
    database's study row)."""
    with engine.connect() as conn:
        task = conn.execute(
            select(studies_table.c.task).where(studies_table.c.study_id == study_id)
        ).scalar()
    if task is None:
        raise LookupError(f"study {study_id!r} is not in the database")
    return study_quality(engine, study_id, str(task)).raters
