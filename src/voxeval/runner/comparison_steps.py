"""Run a protocol's comparison steps after its units are scored.

Every comparison whose units are all ``done`` is compared (a unit whose system failed is done:
its failure scores are an input like any other). A comparison with a unit that failed on our
side or has not finished is stored as ``not_run`` with that unit as the cause; it runs once the
unit is done. ``voxeval run`` skips comparisons already done; ``voxeval score`` recomputes
every comparison (the scores they read were recomputed). A stored ``done`` result is never
replaced by a pending, failed or not-run one.

Rounds: a protocol may plan its comparisons from the verdicts already stored (the arena's
adaptive pairing plans one batch at a time). After each round the plan is asked for again,
and the comparisons it adds are run, until a round adds none. A comparison is tried at most
once per call.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol, TypeVar

from voxeval.api.comparison import Comparison
from voxeval.api.context import RunContext
from voxeval.api.protocol import EvaluationProtocol
from voxeval.config import RunConfig
from voxeval.errors import ConfigError, HarnessFault
from voxeval.protocols.contract import WorkUnit
from voxeval.runner.faults import failure_cause, warn_with_examples
from voxeval.scoring.comparison_result import ComparisonResult
from voxeval.store.records import UnitRecord

CONFIG_FIELD = "comparisons"


def declared_steps(protocol: EvaluationProtocol | type[EvaluationProtocol]) -> tuple[str, ...]:
    """The comparison steps a protocol (instance or class) declares; () for none."""
    return tuple(protocol.comparison_steps)


def step_problems(config: RunConfig, protocol: EvaluationProtocol, protocol_name: str) -> list[str]:
    """Messages about the config's ``comparisons`` field for ``protocol`` (empty: fine)."""
    if config.comparisons is None:
        return []
    known = declared_steps(protocol)
    problems = []
    for step in config.comparisons:
        if step not in known:
            listed = ", ".join(known) if known else "none"
            problems.append(
                f"unknown comparison step {step!r} for the {protocol_name} protocol; "
                f"known: {listed}"
            )
    if problems or not config.comparisons:
        return problems
    return [str(p) for p in protocol.check_comparisons(config, list(config.comparisons))]


def selected_steps(
    config: RunConfig, protocol: EvaluationProtocol, where: str = "config"
) -> list[str]:
    """The steps to run: the config's ``comparisons``, else the protocol's defaults. Raises
    ``ConfigError`` naming the field for an unknown step."""
    problems = step_problems(config, protocol, protocol.name)
    if problems:
        raise ConfigError("\n".join(f"{where}: {CONFIG_FIELD}: {p}" for p in problems))
    if not protocol.comparison_steps:
        return []
    if config.comparisons is not None:
        return list(dict.fromkeys(config.comparisons))
    return list(protocol.default_comparisons(config))


def _blocking_unit(comparison: Comparison, units: dict[str, UnitRecord]) -> ComparisonResult | None:
    """``not_run`` when an input unit is not done (the first such unit is the cause)."""
    for key in comparison.unit_keys:
        record = units.get(key)
        if record is None or record.status in ("planned", "running"):
            return ComparisonResult.not_run(
                f"unit {key} has not finished; run again to complete it", cause="unfinished_unit"
            )
        if record.status == "failed":
            return ComparisonResult.not_run(
                f"unit {key} failed on voxeval's side ({record.cause or 'unknown'}): "
                f"{record.error or ''}".rstrip(": "),
                cause=f"unit_failed:{record.cause or 'unknown'}",
            )
    return None


def _unit_of(record: UnitRecord) -> WorkUnit:
    return WorkUnit(record.item_id, record.system, record.trial, record.condition, record.category)


class Outcome(Protocol):
    """What the runner's executor reports (``voxeval.runner.execute.RunOutcome``)."""

    total: int
    done: int
    failed: int
    errors: list[str]
    kept: int
    interrupted: bool


OutcomeT = TypeVar("OutcomeT", bound=Outcome)
Executor = Callable[
    [RunContext, list[Comparison], Callable[[Comparison], None],
     Callable[[Comparison, Exception], str], str],
    OutcomeT,
]  # fmt: skip


def run_comparison_steps(
    ctx: RunContext, execute: Executor[OutcomeT], *, recompute: bool
) -> OutcomeT | None:
    """Run the selected comparison steps on the runner's ``execute`` (its thread pool and
    progress bar); returns its outcome, with ``kept`` = done results kept because the new
    attempt was not done, or None when there was nothing to compare. ``recompute`` re-runs
    done comparisons too."""
    protocol = ctx.require_protocol()
    steps = selected_steps(ctx.config, protocol, str(ctx.store.run_file))
    if not steps:
        return None
    store = ctx.store
    records = store.units.records()
    by_key = {record.key: record for record in records}
    units = [_unit_of(r) for r in records]
    kept: list[str] = []
    incomplete: list[str] = []
    lock = threading.Lock()

    def save(comparison: Comparison, result: ComparisonResult) -> None:
        stored_it = store.comparisons.save(
            comparison.step, comparison.key, comparison.unit_keys, result
        )
        with lock:
            if not stored_it:
                kept.append(f"{comparison.step} {comparison.key}")
            elif not result.is_done:
                incomplete.append(f"{comparison.key}: {result.status}: {result.error}")

    def work(comparison: Comparison) -> None:
        result = _blocking_unit(comparison, by_key)
        if result is None:
            try:
                result = protocol.compare(comparison, ctx)
            except HarnessFault as exc:  # our side, transient: the next run/score retries
                result = ComparisonResult.pending_retry(f"{exc.component}: {exc}")
        save(comparison, result)

    def on_error(comparison: Comparison, exc: Exception) -> str:
        message = f"{type(exc).__name__}: {exc}"
        save(comparison, ComparisonResult.failed(message, cause=failure_cause(exc)))
        return message

    tried: set[tuple[str, str]] = set()
    outcome: OutcomeT | None = None
    while True:  # one round per batch the plan adds (a single round for a fixed plan)
        comparisons = protocol.comparisons(ctx, steps, units)
        stored = store.comparisons.statuses()
        todo = [
            c
            for c in comparisons
            if (c.step, c.key) not in tried and (recompute or stored.get((c.step, c.key)) != "done")
        ]
        if not todo:
            break
        tried.update((c.step, c.key) for c in todo)
        done_before = sum(1 for c in comparisons if stored.get((c.step, c.key)) == "done")
        ctx.console.print(
            f"comparing: {len(todo)} comparisons ({', '.join(steps)})"
            + (f", {done_before} done before" if done_before and not recompute else "")
        )
        this_round = execute(ctx, todo, work, on_error, "comparing")
        if outcome is None:
            outcome = this_round
        else:
            outcome.total += this_round.total
            outcome.done += this_round.done
            outcome.failed += this_round.failed
            outcome.errors += this_round.errors
            outcome.interrupted = outcome.interrupted or this_round.interrupted
        if this_round.interrupted:
            break
    if outcome is None:
        return None
    outcome.kept = len(kept)
    if outcome.failed:
        ctx.console.print(f"[red]{outcome.failed} comparisons failed[/]; first errors:")
        for line in outcome.errors[:5]:
            ctx.console.print(f"  {line}", highlight=False, markup=False)
    if incomplete:
        warn_with_examples(
            ctx, f"{len(incomplete)} comparisons not done", "(pending or not run)", incomplete
        )
    if kept:
        warn_with_examples(
            ctx, f"kept {len(kept)} stored comparisons", "that could not be recomputed", kept
        )
    return outcome
