"""The contract between the generic runner and an evaluation protocol.

A protocol (``single_turn``, ``multi_turn``, ``live_call``) subclasses ``EvaluationProtocol``
and is registered with ``@PROTOCOLS.register(NAME)``. It turns a suite into work units
(``plan``), runs one unit against one system, writing artifacts into the unit's folder
(``interact``), scores a finished unit from its stored artifacts alone, so re-scoring never
calls the system again (``score``), and summarises the stored scores for
``report/summary.json`` (``summarize``).

Every other hook the runner, the report and the CLI call is declared here with a default, so
a protocol overrides only what it has: comparison steps across systems, a native asyncio
``interact_async``, report sections (``confounded``, ``voices``, ``input_intelligibility``,
``item_attributes``), its own plan checks. Nothing calls a protocol through ``getattr``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, Generic, Protocol, TypeAlias, TypeVar

from voxeval.analysis.aggregate import standard_summary
from voxeval.api.comparison import Comparison
from voxeval.api.work_unit import WorkUnit
from voxeval.config import RunConfig
from voxeval.errors import VoxevalError
from voxeval.json_types import JSONObject
from voxeval.providers.runtime.async_dispatch import run_blocking
from voxeval.registry import Kind
from voxeval.scoring.comparison_result import ComparisonResult
from voxeval.scoring.score import Score
from voxeval.store import RunStore


class ProtocolContext(Protocol):
    """What the base's default hooks read of the run context (``voxeval.api.RunContext``,
    which holds the running protocol: naming it here would make the two modules import each
    other, so the base is generic in its context)."""

    config: RunConfig
    store: RunStore
    seed: int


ContextT = TypeVar("ContextT", bound=ProtocolContext)

SystemSummary: TypeAlias = JSONObject
"""One system's entry of ``summary.json``: ``overall``, ``by_category``, ``by_condition``,
``not_run``, ``units`` and whatever the protocol adds (pass^k curves, judge accounting...)."""

ReportSection: TypeAlias = JSONObject
"""A protocol's section of ``summary.json`` (``confounded``, ``voices``...): JSON values."""


class EvaluationProtocol(ABC, Generic[ContextT]):
    """Base of every protocol: the required steps and every optional hook, with the default
    a protocol without that capability has. ``EvaluationProtocol[voxeval.api.RunContext]`` is
    the type the runner drives."""

    name: ClassVar[str]
    # The record its metrics score (a metric applies when its first parameter is this type);
    # None: the plan check does not match metrics to the protocol.
    record_type: ClassVar[type | None] = None
    # The capability it needs of a system (``voxeval.systems.base``: ``reply`` or ``call``);
    # None: any system.
    system_needs: ClassVar[str | None] = None
    # Every comparison step the protocol knows (the config's ``comparisons`` must use these).
    comparison_steps: ClassVar[tuple[str, ...]] = ()
    # True when ``interact_async`` commits its start and waits on its system inside
    # ``ctx.system_call_slots``: the runner may then prepare more units than ``concurrency``.
    uses_system_call_slots: ClassVar[bool] = False

    # -- required -----------------------------------------------------------------------------

    @abstractmethod
    def plan(self, ctx: ContextT) -> list[WorkUnit]:
        """Load (and if needed build) the suite; return every unit, in a stable order."""

    @abstractmethod
    def interact(self, unit: WorkUnit, ctx: ContextT) -> None:
        """Run the system on the unit and write its artifacts to its folder
        (``ctx.store.folder.unit_dir(unit)``).

        When the system under test fails, store the fault with the artifacts (so ``score``
        can score the failure) and raise ``SystemFault``: the unit is then scored and done.
        Raise ``HarnessFault`` when a part on our side fails (simulator, renderer): the
        runner retries the interaction, then fails the unit with that cause."""

    @abstractmethod
    def score(self, unit: WorkUnit, ctx: ContextT, metrics: list[str] | None) -> dict[str, Score]:
        """Score a finished unit from stored artifacts only. ``None`` = the protocol's defaults.
        A unit whose system failed gets each metric's failure score
        (``voxeval.scoring.system_fault``); a metric that cannot be computed because of a
        transient fault on our side is ``Score.pending_retry``."""

    # -- running ------------------------------------------------------------------------------

    async def interact_async(self, unit: WorkUnit, ctx: ContextT) -> None:
        """``interact`` from an asyncio task; it commits the unit's start itself (the attempt
        counts from there). By default: the start and ``interact`` in a worker thread. A
        protocol whose systems can be awaited overrides it (see ``single_turn``)."""
        await run_blocking(self._start_and_interact, unit, ctx)

    def _start_and_interact(self, unit: WorkUnit, ctx: ContextT) -> None:
        ctx.store.recorder.start(unit)
        self.interact(unit, ctx)

    def check_plan(self, config: RunConfig) -> list[str]:
        """Problems of ``config`` only this protocol knows, as ``field.path: message`` lines
        (the plan check adds them to its own); empty when fine."""
        return []

    # -- summarize ----------------------------------------------------------------------------

    def summarize(self, ctx: ContextT) -> dict[str, SystemSummary]:
        """Per-system summary: ``{system: {"overall": {metric: stat}, "by_category": ...,
        "by_condition": ..., "not_run": {metric: reason}, ...}}`` where ``stat`` is
        ``{"mean", "ci_low", "ci_high", "n"}``. By default the standard summary of the stored
        scores."""
        return standard_summary(
            ctx.store.scores.load(),
            ctx.config.metrics,
            seed=ctx.seed,
            units=ctx.store.units.status_counts(),
        )

    def confounded(self, ctx: ContextT) -> ReportSection:
        """``{dimension: {engines, separated, note}}``: speaker-profile dimensions confounded
        with the TTS engine in the rendered suite (protocols that render speech)."""
        return {}

    def input_intelligibility(self, ctx: ContextT) -> ReportSection:
        """``{condition: stat}``: how well the scoring ASR heard the user side."""
        return {}

    def voices(self, ctx: ContextT) -> ReportSection:
        """``{profile: {voice, engine, naturalness, note}}``: who spoke each profile's
        queries (protocols that render speech)."""
        return {}

    def item_attributes(self, ctx: ContextT) -> dict[str, dict[str, str]]:
        """Item id -> its reporting attributes (the extra ``scores.csv`` columns: query_id,
        profile, engine, noise_category); empty for protocols without them."""
        return {}

    def reference_prompts(self, ctx: ContextT, item_id: str) -> dict[str, str]:
        """The dataset's own judge prompts for an item (e.g. MTalk-Bench's ``arena_prompt``),
        by name; empty when the suite carries none."""
        return {}

    # -- compare (across systems) -------------------------------------------------------------

    def default_comparisons(self, config: RunConfig) -> list[str]:
        """The steps run when the config has no ``comparisons`` key."""
        return []

    def check_comparisons(self, config: RunConfig, steps: Sequence[str]) -> list[str]:
        """Problems with running ``steps`` for ``config`` (e.g. one system only), as
        messages about the ``comparisons`` field; empty when fine."""
        return []

    def comparisons(
        self, ctx: ContextT, steps: Sequence[str], units: Sequence[WorkUnit]
    ) -> list[Comparison]:
        """Every comparison of ``steps`` over the planned ``units``, in a stable order."""
        return []

    def compare(self, comparison: Comparison, ctx: ContextT) -> ComparisonResult:
        """The result of one comparison whose units are all done, from stored artifacts and
        scores only. A transient fault on our side (a judge down, an input score pending) is
        ``ComparisonResult.pending_retry``; one that cannot be fixed by retrying is
        ``ComparisonResult.failed`` with its cause. The runner records an exception as a
        failure on our side."""
        raise VoxevalError(f"{self.name} has no comparison step {comparison.step!r}")

    def summarize_comparisons(self, ctx: ContextT) -> dict[str, ReportSection]:
        """``{step: summary}`` of the stored results, for ``report/summary.json``."""
        return {}

    def release(self) -> None:
        """Forget what the protocol keeps for the run (scoring resources hold the run
        context and its models); called by ``RunContext.close`` when the run ends."""


# Protocol classes by name; a class is instantiated without arguments.
PROTOCOLS: Kind[type[EvaluationProtocol[Any]]] = Kind("protocol")
