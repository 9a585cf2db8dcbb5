"""Judge calibration that can decide (issue 37.6): default development sets of at least 30
labelled items per metric and dimension with subtle defects beside obvious ones, an interval
on every agreement figure, and a plain statement when the set is too small to tell a fit
judge from an unfit one."""

from __future__ import annotations

from collections import Counter

import pytest

from voxeval.analysis.agreement.classification_agreement import (
    FIT_KAPPA,
    classification_agreement,
    kappa_from_accuracy,
)
from voxeval.calibration.defects import DEFECTS
from voxeval.calibration.dev_set import MIN_ITEMS, build_dev_set
from voxeval.calibration.metric_labels import METRIC_LABELS
from voxeval.cli.commands_judges import _statements, _table


def test_default_sets_have_30_labelled_items_per_metric_and_dimension() -> None:
    metrics = ["faithfulness", "speakability"]
    dev_set = build_dev_set(metrics, per_defect=3, seed=0)
    assert dev_set.items_short == {} and dev_set.shortfall == {}
    for metric in metrics:
        rows = [e for e in dev_set.examples if e.metric == metric]
        assert len(rows) >= MIN_ITEMS, metric
        assert sum(e.expected.defect for e in rows) >= MIN_ITEMS // 3, metric
        for dim in METRIC_LABELS[metric].dimensions:
            labelled = [e.expected.dimensions.get(dim) for e in rows]
            assert sum(v is not None for v in labelled) >= MIN_ITEMS, (metric, dim)
    severities = Counter(
        DEFECTS[e.defect].severity for e in dev_set.examples if e.defect in DEFECTS
    )
    assert severities["subtle"] >= 20 and severities["obvious"] >= 20
    subtle = {e.defect for e in dev_set.examples if e.defect in DEFECTS}
    assert {"raw_id_in_backticks", "misread_tool_result"} <= subtle


def test_the_old_default_set_is_called_too_small_even_for_a_perfect_judge() -> None:
    # the case: 13 faithfulness items from 4 scenarios, a perfect judge
    truth = [True] * 6 + [False] * 7
    stats = classification_agreement(truth, truth, clusters=[i % 4 for i in range(13)])
    assert stats["kappa"] == 1.0
    low, high = stats["kappa_ci"]
    chance = (6 / 13) ** 2 + (7 / 13) ** 2
    assert low == pytest.approx(kappa_from_accuracy(stats["accuracy_ci"][0], chance))
    assert high == 1.0 and low < FIT_KAPPA
    assert stats["verdict"] == "undecided"
    assert stats["statement"].startswith("too small to tell a fit judge from an unfit one")


def test_thirty_items_tell_a_perfect_judge_from_a_random_one() -> None:
    truth = [True] * 15 + [False] * 15
    clusters = list(range(30))
    perfect = classification_agreement(truth, truth, clusters=clusters)
    assert perfect["verdict"] == "fit" and perfect["kappa_ci"][0] >= FIT_KAPPA
    coin = [i % 2 == 0 for i in range(15)] * 2  # agrees on half: kappa 0
    random = classification_agreement(truth, coin, clusters=clusters)
    assert random["kappa"] == pytest.approx(0.0)
    assert random["verdict"] == "unfit" and random["kappa_ci"][1] < FIT_KAPPA
    one_class = classification_agreement([False] * 30, [False] * 30, clusters=clusters)
    assert one_class["kappa_ci"] is None and one_class["verdict"] == "undecided"
    assert "all of one class" in one_class["statement"]


def test_the_console_report_shows_intervals_and_statements() -> None:
    stats = classification_agreement([True] * 15 + [False] * 15, [True] * 15 + [False] * 15,
                                     clusters=list(range(30)))  # fmt: skip
    report = {
        "seed": 0,
        "metrics": {
            "speakability": {**stats, "dimensions": {}, "parse_failures": 0, "judge_failures": 0}
        },
    }
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(_table(report))
    text = console.export_text()
    assert "kappa [95% CI]" in text and "1.00 [0.77, 1.00]" in text and "fit" in text
    assert _statements(report) == [
        "speakability: fit: the kappa interval [0.77, 1.00] is above 0.6"
    ]
