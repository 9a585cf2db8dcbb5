"""Golden tests of the judge-calibration statistics on hand-computed 2x2 tables."""

from __future__ import annotations

import pytest

from voxeval.analysis.agreement.classification_agreement import (
    ConfusionCounts,
    classification_agreement,
    confusion_counts,
    f1_score,
    kappa,
)


def labels(tp: int, fn: int, fp: int, tn: int) -> tuple[list[bool], list[bool]]:
    truth = [True] * (tp + fn) + [False] * (fp + tn)
    predicted = [True] * tp + [False] * fn + [True] * fp + [False] * tn
    return truth, predicted


def test_confusion_counts_by_hand() -> None:
    truth = [True, True, False, False, True]
    predicted = [True, False, True, False, True]
    assert confusion_counts(truth, predicted) == ConfusionCounts(tp=2, fp=1, fn=1, tn=1)


def test_symmetric_table() -> None:
    # po = 7/10; rows 5/5, columns 6/4: pe = (5*6 + 5*4)/100 = 0.5; kappa = 0.2/0.5 = 0.4
    out = classification_agreement(*labels(tp=4, fn=1, fp=2, tn=3))
    assert out["n"] == 10 and out["positives"] == 5 and out["base_rate"] == 0.5
    assert out["accuracy"] == pytest.approx(0.7)
    assert out["precision"] == pytest.approx(4 / 6)
    assert out["recall"] == pytest.approx(0.8)
    assert out["f1"] == pytest.approx(8 / 11)
    assert out["kappa"] == pytest.approx(0.4)
    assert out["confusion"] == {"tp": 4, "fp": 2, "fn": 1, "tn": 3}


def test_asymmetric_table() -> None:
    # po = 0.6; rows 60/40, columns 70/30: pe = (4200 + 1200)/10000 = 0.54;
    # kappa = 0.06/0.46; F1 = 90/130
    out = classification_agreement(*labels(tp=45, fn=15, fp=25, tn=15))
    assert out["accuracy"] == pytest.approx(0.6)
    assert out["kappa"] == pytest.approx(0.06 / 0.46)
    assert out["f1"] == pytest.approx(90 / 130)
    assert out["base_rate"] == pytest.approx(0.6)


def test_a_constant_rater_has_kappa_zero_and_the_base_rate_as_accuracy() -> None:
    # always "no defect": accuracy = share of clean examples, kappa 0, F1 0 (defects missed)
    out = classification_agreement(*labels(tp=0, fn=3, fp=0, tn=9))
    assert out["accuracy"] == pytest.approx(0.75)
    assert out["kappa"] == 0.0
    assert out["f1"] == 0.0 and out["recall"] == 0.0 and out["precision"] is None
    # always "defect": accuracy = the base rate, kappa 0
    out = classification_agreement(*labels(tp=3, fn=0, fp=9, tn=0))
    assert out["accuracy"] == pytest.approx(0.25) and out["kappa"] == 0.0


def test_perfect_agreement() -> None:
    out = classification_agreement(*labels(tp=5, fn=0, fp=0, tn=7))
    assert out["accuracy"] == 1.0 and out["kappa"] == pytest.approx(1.0) and out["f1"] == 1.0


def test_complete_disagreement_is_minus_one() -> None:
    assert kappa(ConfusionCounts(tp=0, fn=4, fp=4, tn=0)) == pytest.approx(-1.0)


def test_undefined_values_are_none() -> None:
    # one class on both sides: chance agreement is already perfect
    assert kappa(ConfusionCounts(tn=6)) is None
    assert f1_score(ConfusionCounts(tn=6)) is None
    assert kappa(ConfusionCounts()) is None
    empty = classification_agreement([], [])
    assert empty["n"] == 0 and empty["accuracy"] is None and empty["accuracy_ci"] is None


def test_accuracy_interval_is_wider_when_examples_cluster() -> None:
    truth, predicted = labels(tp=4, fn=2, fp=2, tn=4)
    independent = classification_agreement(truth, predicted)
    # correct and wrong answers bunch up by scenario: fewer independent units
    clusters = ["a", "a", "b", "b", "c", "c", "a", "a", "b", "b", "d", "d"]
    clustered = classification_agreement(truth, predicted, clusters=clusters)
    low, high = independent["accuracy_ci"]
    c_low, c_high = clustered["accuracy_ci"]
    assert low <= independent["accuracy"] <= high
    assert c_high - c_low > high - low


def test_mismatched_lengths_are_refused() -> None:
    with pytest.raises(ValueError, match="2 labels but 1 answers"):
        confusion_counts([True, False], [True])


def test_label_kappa_with_three_classes_by_hand() -> None:
    from voxeval.analysis.agreement.classification_agreement import label_kappa

    first = ["a"] * 5 + ["b"] * 4 + ["t"]
    second = ["a"] * 4 + ["b"] + ["a"] + ["b"] * 3 + ["t"]
    value, table = label_kappa(first, second)
    assert table == {"classes": ["a", "b", "t"], "table": [[4, 1, 0], [1, 3, 0], [0, 0, 1]]}
    assert value == pytest.approx((0.8 - 0.42) / (1 - 0.42))
    assert label_kappa(["a", "a"], ["a", "a"])[0] is None
