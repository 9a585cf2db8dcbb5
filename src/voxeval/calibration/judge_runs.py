"""Running the configured judges over a development set, and the agreement figures.

Every example goes through the registered metric exactly as in a run (``run_metric``), so
what is calibrated is the metric as voxeval computes it: the prompt, the schema, the retries
and the aggregation rule. An example whose metric did not produce a value (the judge could not
be reached, or never answered in format) is a judge failure: counted and listed with its
cause, and left out of the agreement figures, never scored as a pass or a fail."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from voxeval.analysis.agreement.classification_agreement import classification_agreement
from voxeval.calibration.defects import DEFECTS
from voxeval.calibration.dev_set import CalibrationExample
from voxeval.calibration.metric_labels import METRIC_LABELS, Verdict
from voxeval.json_types import JSONReadValue
from voxeval.scoring.metric_runner import run_metric
from voxeval.scoring.replies.reply_record import ScoringResources
from voxeval.scoring.score import Score


@dataclass(frozen=True)
class JudgedExample:
    example: CalibrationExample
    score: Score
    verdict: Verdict | None  # None: the judge gave no usable answer (see ``score.error``)

    @property
    def parse_failures(self) -> int:
        return int(self.score.details.get("parse_failures") or 0)

    def to_dict(self) -> dict[str, JSONReadValue]:
        ex = self.example
        return {
            "id": ex.example_id,
            "metric": ex.metric,
            "scenario": ex.scenario_id,
            "domain": ex.domain,
            "defect": ex.defect,
            "edit": ex.edit,
            "expected": {"defect": ex.expected.defect, "dimensions": ex.expected.dimensions},
            "judged": (
                None
                if self.verdict is None
                else {"defect": self.verdict.defect, "dimensions": self.verdict.dimensions}
            ),
            "correct": None if self.verdict is None else self.verdict.defect == ex.expected.defect,
            "judge_failure": self.score.error if self.verdict is None else None,
            "score": self.score.to_dict(),
        }


def judge_example(example: CalibrationExample, resources: ScoringResources) -> JudgedExample:
    score = run_metric(example.metric, example.record, resources)
    verdict = METRIC_LABELS[example.metric].verdict(score) if score.ran else None
    return JudgedExample(example, score, verdict)


def judge_examples(
    examples: list[CalibrationExample],
    resources: ScoringResources,
    *,
    concurrency: int = 4,
    on_done: Callable[[JudgedExample], None] | None = None,
) -> list[JudgedExample]:
    """Every example judged, ``concurrency`` at a time; results in the examples' order."""

    def one(example: CalibrationExample) -> JudgedExample:
        judged = judge_example(example, resources)
        if on_done is not None:
            on_done(judged)
        return judged

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        return list(pool.map(one, examples))


def _agreement(pairs: list[tuple[bool, bool, str]]) -> dict[str, JSONReadValue]:
    truth = [t for t, _, _ in pairs]
    predicted = [p for _, p, _ in pairs]
    clusters = [c for _, _, c in pairs]
    return classification_agreement(truth, predicted, clusters=clusters)


def metric_summary(metric: str, judged: list[JudgedExample]) -> dict[str, JSONReadValue]:
    """Agreement of one metric's judge with the labels, overall and per dimension; the
    independent unit of the accuracy interval is the scenario."""
    answered = [j for j in judged if j.verdict is not None]
    failed = [j for j in judged if j.verdict is None]
    overall = _agreement(
        [
            (j.example.expected.defect, j.verdict.defect, j.example.scenario_id)
            for j in answered
            if j.verdict
        ]
    )
    dimensions: dict[str, JSONReadValue] = {}
    for name in METRIC_LABELS[metric].dimensions:
        pairs = []
        unreadable = 0
        for j in answered:
            label = j.example.expected.dimensions.get(name)
            said = j.verdict.dimensions.get(name) if j.verdict else None
            if label is None:
                continue
            if said is None:
                unreadable += 1
                continue
            pairs.append((label, said, j.example.scenario_id))
        stats = _agreement(pairs)
        if unreadable:
            stats["not_reported"] = unreadable
        dimensions[name] = stats
    return {
        **overall,
        "examples": len(judged),
        "judge_failures": len(failed),
        "failures": [{"id": j.example.example_id, "reason": j.score.error} for j in failed],
        "parse_failures": sum(j.parse_failures for j in judged),
        "by_defect": {
            defect: {
                "n": len(rows),
                "flagged": sum(1 for j in rows if j.verdict and j.verdict.defect),
                "severity": DEFECTS[defect].severity if defect in DEFECTS else None,
            }
            for defect in sorted({j.example.defect for j in answered})
            for rows in [[j for j in answered if j.example.defect == defect]]
        },
        "dimensions": dimensions,
    }


def unreachable(summary: Mapping[str, JSONReadValue]) -> bool:
    """True when a metric's judge answered no example at all although some were sent."""
    sent, answered, failed = summary["examples"], summary["n"], summary["judge_failures"]
    if not (
        isinstance(sent, int | float)
        and isinstance(answered, int | float)
        and isinstance(failed, int | float)
    ):
        raise ValueError(f"a metric summary's counts must be numbers: {summary!r}")
    return sent > 0 and answered == 0 and failed > 0
