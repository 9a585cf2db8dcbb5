"""The scoring skeleton the built-in protocols share: a unit is scored by registered metrics
on one record built from its stored artifacts.

``ScoredProtocol.score`` does, for every protocol: pick the metrics (asked for, else the
config's, else the protocol's defaults) and refuse unknown names; read the unit's stored
artifacts once (``stored_unit``); score a unit whose system failed as a failure (or, for a
protocol whose failed units still left something to measure, the metrics on that, each
falling back to its failure value); otherwise run the metrics under a usage ledger and record
what scoring cost. A protocol writes only what differs: how to read its unit
(``stored_unit``), the providers its metrics share (``build_resources``, made once per run),
and its defaults.
"""

from __future__ import annotations

import threading
from abc import abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Generic, TypeVar

from voxeval.api.context import RunContext
from voxeval.api.protocol import EvaluationProtocol
from voxeval.api.work_unit import WorkUnit
from voxeval.errors import ConfigError, ProviderUnavailable, VoxevalError
from voxeval.providers.base import LLM, AudioLLM
from voxeval.providers.usage.usage_ledger import (
    UNATTRIBUTED,
    AttributedProvider,
    Ledger,
    usage_ledger,
)
from voxeval.scoring.judge import Judge, Modality
from voxeval.scoring.metric import METRICS
from voxeval.scoring.metric_runner import run_metrics
from voxeval.scoring.replies.reply_record import NO_AUDIO_JUDGE
from voxeval.scoring.score import Score
from voxeval.scoring.system_fault import failure_scores, partial_call_score

RecordT = TypeVar("RecordT")
ResourcesT = TypeVar("ResourcesT")

NO_JUDGE = "no judge configured"


@dataclass(frozen=True)
class StoredUnit(Generic[RecordT]):
    """A finished unit as its scoring reads it: the record its metrics score (built only
    when they run), the cause of its system's fault if it failed, why it cannot be scored at
    all (its metrics are then not run with that reason), and scores already computed on it
    that are kept rather than computed again."""

    record: Callable[[], RecordT] | None = None
    fault_cause: str | None = None
    unscorable: str | None = None
    scored: Mapping[str, Score] = field(default_factory=dict)


def check_metric_names(wanted: list[str]) -> None:
    """``ConfigError`` listing the known metrics when ``wanted`` names an unknown one."""
    known = METRICS.names()
    unknown = [m for m in wanted if m not in known]
    if unknown:
        raise ConfigError(f"unknown metrics {unknown}; known: {', '.join(known)}")


def counted_judge(
    llm: LLM | AudioLLM,
    component: str = "judge",
    *,
    modality: Modality = "text",
    max_attempts: int = 3,
    temperature: float = 0.0,
    max_tokens: int | None = 1024,
    repeats: int = 1,
) -> Judge:
    """A judge on ``llm`` whose calls are counted for the unit being scored as
    ``component`` (the unit's usage)."""
    counted = AttributedProvider(llm, component, ("chat",))
    return Judge(
        counted,
        modality=modality,
        max_attempts=max_attempts,
        temperature=temperature,
        max_tokens=max_tokens,
        repeats=repeats,
    )


def configured_judge(ctx: RunContext) -> LLM:
    """The run's text judge (``judge:``), or ``ProviderUnavailable`` with the reason."""
    llm = ctx.judge()
    if llm is None:
        raise ProviderUnavailable(ctx.judge_unavailable_reason() or NO_JUDGE)
    return llm


def configured_audio_judge(ctx: RunContext, why: str = "") -> AudioLLM:
    """The run's audio judge (``audio_judge:``), or ``ProviderUnavailable`` with the reason
    (after ``why``, what needed it)."""
    heard = ctx.audio_judge()
    if heard is None:
        reason = ctx.audio_judge_unavailable_reason() or NO_AUDIO_JUDGE
        raise ProviderUnavailable(f"{why}{reason}")
    return heard


class ScoredProtocol(EvaluationProtocol[RunContext], Generic[RecordT, ResourcesT]):
    """A protocol whose units are scored by registered metrics (``voxeval.scoring``)."""

    # Scoring usage recorded per unit: (usage ledger component, label in the usage tables).
    scoring_usage: ClassVar[tuple[tuple[str, str], ...]] = (
        ("judge", "judge"),
        ("scoring_asr", "scoring_asr"),
        (UNATTRIBUTED, "scoring"),
    )
    # True when a unit whose system failed still left something to measure (a partial
    # call): its metrics run on it and each falls back to its failure value where it must.
    scores_partial_failures: ClassVar[bool] = False

    def __init__(self) -> None:
        self._resources_lock = threading.Lock()
        self._resources: ResourcesT | None = None

    # -- what each protocol writes -------------------------------------------------------------

    @abstractmethod
    def default_metrics(self, ctx: RunContext) -> list[str]:
        """The metrics scored when neither the caller nor the config names any."""

    @abstractmethod
    def stored_unit(self, unit: WorkUnit, ctx: RunContext) -> StoredUnit[RecordT]:
        """Read the finished unit's stored artifacts (only those: never the system)."""

    @abstractmethod
    def build_resources(self, ctx: RunContext) -> ResourcesT:
        """The providers the metrics share (judges, scoring ASR...), as lazy factories."""

    def judge_parse_failures(self, scores: Mapping[str, Score]) -> int:
        """Judge answers that could not be parsed while ``scores`` were computed (recorded
        with the judge's usage); 0 when the protocol does not count them."""
        return 0

    # -- the skeleton --------------------------------------------------------------------------

    def release(self) -> None:
        """Forget the run's scoring resources (they hold the run context and its models)."""
        with self._resources_lock:
            self._resources = None

    def resources(self, ctx: RunContext) -> ResourcesT:
        """``build_resources``, made once per protocol instance (shared by every unit)."""
        with self._resources_lock:
            if self._resources is None:
                self._resources = self.build_resources(ctx)
            return self._resources

    def metrics_to_score(self, ctx: RunContext, metrics: list[str] | None) -> list[str]:
        """``metrics``, else the config's ``metrics``, else the defaults; names checked."""
        wanted = list(metrics) if metrics else list(ctx.config.metrics or self.default_metrics(ctx))
        check_metric_names(wanted)
        return wanted

    def score(self, unit: WorkUnit, ctx: RunContext, metrics: list[str] | None) -> dict[str, Score]:
        wanted = self.metrics_to_score(ctx, metrics)
        stored = self.stored_unit(unit, ctx)
        if stored.unscorable is not None:
            return {m: Score.not_run(stored.unscorable) for m in wanted}
        cause = stored.fault_cause
        if cause is not None and not self.scores_partial_failures:
            return failure_scores(wanted, cause)  # the system failed: the failure is scored
        if stored.record is None:
            raise VoxevalError(f"{self.name}: unit {unit.key} has no record to score")
        record = stored.record()
        kept = {m: s for m, s in stored.scored.items() if m in wanted and s.ran}
        with usage_ledger() as ledger:
            computed = run_metrics(
                [m for m in wanted if m not in kept], record, self.resources(ctx)
            )
        self.record_scoring_usage(ctx, unit, ledger, computed)
        scores = {m: kept[m] if m in kept else computed[m] for m in wanted}
        if cause is not None:  # scored on what the failed unit left, else as a failure
            scores = {m: partial_call_score(m, score, cause) for m, score in scores.items()}
        return scores

    def record_scoring_usage(
        self, ctx: RunContext, unit: WorkUnit, ledger: Ledger, scores: Mapping[str, Score]
    ) -> None:
        """What scoring ``unit`` cost, per ``scoring_usage`` component that was used (pending
        or failed calls included: their requests were sent)."""
        for component, label in self.scoring_usage:
            used = ledger.get(component)
            if used is None or not (used.calls or used.requests or used.models):
                continue
            failures = self.judge_parse_failures(scores) if component == "judge" else 0
            ctx.store.recorder.record_component_usage(unit, label, used, failures)
