"""The labelled development sets: scenarios of the built-in domains taken in a seeded order,
a correct call per scenario (a negative example for every metric) and defect-injected copies
(a positive example for the defect's metric), until every defect has ``per_defect`` examples.
Deterministic for a seed."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from voxeval.calibration.clean_calls import CleanCall, builtin_suites, clean_call, scenario_order
from voxeval.calibration.defects import DEFECTS, Defect
from voxeval.calibration.metric_labels import METRIC_LABELS
from voxeval.scoring.live_call_record import LiveCallRecord

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
    edit: dict[str, Any] = field(default_factory=dict)


@dataclass
class DevSet:
    examples: list[CalibrationExample]
    scenarios: list[str]
    shortfall: dict[str, int]  # defect -> examples missing (the domains ran out of places)


def defect_rng(seed: int, *keys: str) -> np.random.Generator:
    """A generator that depends on the seed and ``keys`` only (not on the order examples are
    built in)."""
    digest = hashlib.sha256("/".join(keys).encode("utf-8")).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "little")])


def _example(
    call: CleanCall, metric: str, defect: str, record: LiveCallRecord, edit: dict[str, Any]
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
    [CleanCall, np.random.Generator], tuple[LiveCallRecord, LiveCallRecord, dict[str, Any]] | None
]


def build_dev_set(
    metrics: list[str],
    *,
    per_defect: int,
    seed: int = 0,
    audio: AudioBuilder | None = None,
) -> DevSet:
    """Examples for ``metrics`` (names of ``METRIC_LABELS``). Audio metrics get examples only
    with an ``audio`` builder (it renders speech, which takes time); their clean examples are
    the rendered clean calls of the scenarios that got an audio defect."""
    if per_defect < 1:
        raise ValueError("per_defect must be at least 1")
    text_metrics = [m for m in metrics if METRIC_LABELS[m].judge == "text"]
    audio_metrics = [m for m in metrics if METRIC_LABELS[m].judge == "audio"] if audio else []
    wanted: list[Defect] = [
        d for d in DEFECTS.values() if d.metric in text_metrics or d.metric in audio_metrics
    ]
    need = {d.name: per_defect for d in wanted}
    examples: list[CalibrationExample] = []
    scenarios: list[str] = []
    for suite, scenario in scenario_order(builtin_suites(), seed):
        if not any(need.values()):
            break
        call = clean_call(suite, scenario)
        if call is None:
            continue
        found: list[CalibrationExample] = []
        for defect in wanted:
            if not need[defect.name]:
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
            need[defect.name] -= 1
        if not found:
            continue
        scenarios.append(scenario.id)
        examples += [_example(call, m, CLEAN, call.record(), {}) for m in text_metrics]
        examples += found
    shortfall = {name: left for name, left in need.items() if left}
    return DevSet(examples=examples, scenarios=scenarios, shortfall=shortfall)
