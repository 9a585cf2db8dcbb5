"""The labelled development sets: scenarios of the built-in domains taken in a seeded order,
a correct call per scenario (a negative example for every metric) and defect-injected copies
(a positive example for the defect's metric), until every defect has ``per_defect`` examples.
Deterministic for a seed."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from voxeval.analysis.agreement.classification_agreement import FIT_KAPPA, perfect_judge_kappa_low
from voxeval.calibration.clean_calls import CleanCall, builtin_suites, clean_call, scenario_order
from voxeval.calibration.defects import DEFECTS, Defect
from voxeval.calibration.metric_labels import METRIC_LABELS
from voxeval.calibration.text_defects import DefectEdit
from voxeval.scoring.calls.live_call_record import LiveCallRecord

CLEAN = "clean"


@dataclass(frozen=True)
class Expected:
    defect: bool  # the metric should fail on this call
    dimensions: dict[str, bool | None] = field(default_factory=dict)


@dataclass(frozen=True)
class CalibrationExample:
    example_id: str
    metric: str
    scenario_id: str
    domain: str
    defect: str  # a ``DEFECTS`` name, or "clean"
    record: LiveCallRecord
    expected: Expected
    edit: DefectEdit = field(default_factory=dict)


@dataclass
class DevSet:
    examples: list[CalibrationExample]
    scenarios: list[str]
    shortfall: dict[str, int]  # defect -> examples missing (the domains ran out of places)
    # metric -> verdict / dimension -> labelled items (or defects) still missing at the end
    items_short: dict[str, dict[str, int]] = field(default_factory=dict)


def defect_rng(seed: int, *keys: str) -> np.random.Generator:
    """A generator that depends on the seed and ``keys`` only (not on the order examples are
    built in)."""
    digest = hashlib.sha256("/".join(keys).encode("utf-8")).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "little")])


def _example(
    call: CleanCall, metric: str, defect: str, record: LiveCallRecord, edit: DefectEdit
) -> CalibrationExample:
    if defect == CLEAN:
        expected = Expected(False, METRIC_LABELS[metric].clean_dimensions())
    else:
        expected = Expected(True, dict(DEFECTS[defect].dimensions))
    return CalibrationExample(
        example_id=f"{metric}/{call.scenario.id}/{defect}",
        metric=metric,
        scenario_id=call.scenario.id,
        domain=call.domain,
        defect=defect,
        record=record,
        expected=expected,
        edit=edit,
    )


# Builds the audio examples of one clean call: (clean record, defect record, edit) or None.
AudioBuilder = Callable[
    [CleanCall, np.random.Generator], tuple[LiveCallRecord, LiveCallRecord, DefectEdit] | None
]


# Default sizes: every metric and every dimension gets at least MIN_ITEMS labelled items, of
# which at least a third are defects where a defect can flag it, and scenarios are added until
# a perfect judge's kappa interval would clear the fitness line (analysis/
# classification_agreement.py, ``fitness``): a smaller set could not tell a fit judge from an
# unfit one.
MIN_ITEMS = 30
POSITIVE_SHARE = 3  # at least one item in this many is a defect (10 of 30)


@dataclass
class _Need:
    """The labels gathered so far per metric and part (``""``: the metric's verdict, else a
    dimension), each with its scenario, and what is still wanted: ``min_items`` labelled
    items; where some defect can flag the part, ``min_positives`` defects and a set on which a
    perfect judge would be shown fit (``perfect_judge_kappa_low``)."""

    min_items: int
    min_positives: int
    labels: dict[str, dict[str, list[tuple[bool, str]]]]
    flaggable: dict[str, set[str]]

    @classmethod
    def of(cls, metrics: list[str], defects: list[Defect], min_items: int, min_pos: int) -> _Need:
        labels: dict[str, dict[str, list[tuple[bool, str]]]] = {
            m: {p: [] for p in ["", *METRIC_LABELS[m].dimensions]} for m in metrics
        }
        flaggable = {m: {""} for m in metrics}
        for d in defects:
            if d.metric in flaggable:
                flaggable[d.metric] |= {dim for dim, v in d.dimensions.items() if v}
        return cls(min_items, min_pos, labels, flaggable)

    def missing(self, metric: str, part: str) -> int:
        """Labelled items (or defects) still wanted for ``part``; 1 when only decisiveness is
        missing."""
        rows = self.labels[metric][part]
        short = self.min_items - len(rows)
        if part not in self.flaggable[metric]:
            return max(0, short)
        positives = sum(label for label, _ in rows)
        short = max(short, self.min_positives - positives)
        # below the default size a set is a quick check: built to the sizes only
        if short <= 0 and self.min_items >= MIN_ITEMS and 0 < positives < len(rows):
            clusters = [scenario for _, scenario in rows]
            if perfect_judge_kappa_low(positives, len(rows), clusters) < FIT_KAPPA:
                return 1
        return max(0, short)

    def wants_clean(self, metric: str) -> bool:
        return any(self.missing(metric, part) for part in self.labels.get(metric, {}))

    def wants_defect(self, defect: Defect) -> bool:
        metric = defect.metric
        verdicts = self.labels.get(metric, {}).get("", [])
        positives = sum(label for label, _ in verdicts)
        if positives > len(verdicts) - positives:  # keep the base rate at most one half
            return False
        labelled = {"", *(k for k, v in defect.dimensions.items() if v is not None)}
        return any(self.missing(metric, p) for p in labelled if p in self.labels[metric])

    def count(self, example: CalibrationExample) -> None:
        labels = {"": example.expected.defect, **example.expected.dimensions}
        for part, label in labels.items():
            if label is not None and part in self.labels.get(example.metric, {}):
                self.labels[example.metric][part].append((bool(label), example.scenario_id))

    def shortfall(self) -> dict[str, dict[str, int]]:
        """metric -> verdict / dimension -> labelled items still wanted."""
        out: dict[str, dict[str, int]] = {}
        for metric, parts in self.labels.items():
            missing = {p or "verdict": self.missing(metric, p) for p in parts}
            missing = {p: left for p, left in missing.items() if left}
            if missing:
                out[metric] = missing
        return out


def build_dev_set(
    metrics: list[str],
    *,
    per_defect: int,
    seed: int = 0,
    audio: AudioBuilder | None = None,
    min_items: int = MIN_ITEMS,
    min_positives: int | None = None,
) -> DevSet:
    """Examples for ``metrics`` (names of ``METRIC_LABELS``). Scenarios are added until every
    defect has ``per_defect`` examples and every metric and dimension has ``min_items``
    labelled items, ``min_positives`` (default a third) of them defects where some defect can
    flag it, and (with ``min_items`` of at least ``MIN_ITEMS``) until a perfect judge would be
    shown fit on it (a
    dimension no defect flags, such as a hallucination, can only be measured on clean calls).
    Audio metrics get examples only with an ``audio`` builder (it renders speech, which takes
    time); their clean examples are the rendered clean calls of the scenarios that got an
    audio defect."""
    if per_defect < 1:
        raise ValueError("per_defect must be at least 1")
    text_metrics = [m for m in metrics if METRIC_LABELS[m].judge == "text"]
    audio_metrics = [m for m in metrics if METRIC_LABELS[m].judge == "audio"] if audio else []
    wanted: list[Defect] = [
        d for d in DEFECTS.values() if d.metric in text_metrics or d.metric in audio_metrics
    ]
    need = {d.name: per_defect for d in wanted}
    positives = min_positives if min_positives is not None else min_items // POSITIVE_SHARE
    sizes = _Need.of([*text_metrics, *audio_metrics], wanted, min_items, positives)
    examples: list[CalibrationExample] = []
    scenarios: list[str] = []
    for suite, scenario in scenario_order(builtin_suites(), seed):
        if not any(need.values()) and not sizes.shortfall():
            break
        call = clean_call(suite, scenario)
        if call is None:
            continue
        found: list[CalibrationExample] = []
        for defect in wanted:
            if not need[defect.name] and not sizes.wants_defect(defect):
                continue
            rng = defect_rng(seed, scenario.id, defect.name)
            if defect.inject is not None:
                injected = defect.inject(call, rng)
                if injected is None:
                    continue
                record = call.record(injected.timeline)
                found.append(_example(call, defect.metric, defect.name, record, injected.edit))
            elif audio is not None:
                built = audio(call, rng)
                if built is None:
                    continue
                clean_record, defect_record, edit = built
                found.append(_example(call, defect.metric, CLEAN, clean_record, {}))
                found.append(_example(call, defect.metric, defect.name, defect_record, edit))
            need[defect.name] = max(0, need[defect.name] - 1)
        # the correct call is a clean example of every metric of a scenario in use
        wanted_clean = bool(found) or any(sizes.wants_clean(m) for m in text_metrics)
        cleans = [_example(call, m, CLEAN, call.record(), {}) for m in text_metrics if wanted_clean]
        if not found and not cleans:
            continue
        scenarios.append(scenario.id)
        for example in [*cleans, *found]:
            sizes.count(example)
        examples += cleans + found
    shortfall = {name: left for name, left in need.items() if left}
    return DevSet(
        examples=examples, scenarios=scenarios, shortfall=shortfall, items_short=sizes.shortfall()
    )
