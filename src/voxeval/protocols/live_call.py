"""The ``live_call`` protocol: simulated calls between a caller and each system under test.

Plan: scenarios x systems x trials x conditions (``clean`` plus one per ``perturbations:``
entry). A system is ``{name: LABEL, type: SYSTEM, ...options}`` for any system that can hold a
live call (``voxeval.systems``; a turn system such as ``http`` is put in the call adapter);
the legacy ``type: agent, agent: SYSTEM`` still works. Interact runs the
call (``voxeval.simulation.engine``), records it and validates the simulation, regenerating a
call that fails a gate (``voxeval.protocols.call_validation``); score reads only the final
recording; summarize
adds, per system, ``task_completion``/``turn_taking`` stats and the pass@k / pass^k curves
(a trial passes when task completion is 1) and the EVA-A / EVA-X composites
(``analysis.composite_summary``; claimed only where every component ran on every trial)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voxeval.analysis.aggregate import standard_summary
from voxeval.analysis.calls.call_statistics import call_statistics
from voxeval.analysis.calls.composite_summary import eva_composites
from voxeval.analysis.corpus_wer import add_corpus_wer
from voxeval.analysis.passk import passk_summary
from voxeval.api.context import RunContext
from voxeval.api.protocol import PROTOCOLS
from voxeval.api.scored_protocol import (
    ScoredProtocol,
    StoredUnit,
    configured_audio_judge,
    configured_judge,
    counted_judge,
)
from voxeval.api.work_unit import WorkUnit
from voxeval.atomic_files import read_json
from voxeval.audio import Audio, read_audio
from voxeval.benchmarks.eva.scenario import Scenario, ScenarioSuite, load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.config import ProviderSpec, SystemSpec
from voxeval.errors import ConfigError, SystemFault, UnknownComponent
from voxeval.json_types import JSONObject
from voxeval.protocols.adapter_timing import adapter_timing
from voxeval.protocols.call_validation import (
    run_validated_call,
    stored_gate_scores,
    validation_summary,
)
from voxeval.protocols.latency_basis import latency_basis
from voxeval.protocols.live_call_scoring import live_call_scoring
from voxeval.protocols.summary_distributions import (
    add_distributions,
    latency_histograms,
    response_latencies,
    turn_stats,
)
from voxeval.providers.asr.spoken_language import base_language
from voxeval.providers.usage.usage_ledger import (
    UNATTRIBUTED,
    AttributedProvider,
    Ledger,
    attributed,
    usage_ledger,
)
from voxeval.scoring.calls.call_pipeline import system_pipeline
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.simulation_gates import GateResult, run_gates
from voxeval.scoring.judge import Judge
from voxeval.scoring.metric import METRICS
from voxeval.scoring.replies.reply_record import ScoringResources
from voxeval.simulation.behaviour_choice import behaviour_record
from voxeval.simulation.engine import CallResult, run_call
from voxeval.simulation.perturbations import Condition, parse_conditions
from voxeval.simulation.recorder import CALL_FILE, TRACK_FILES, load_call, record_call
from voxeval.simulation.simulation_config import (
    ENGLISH_ONLY_ASR,
    MULTILINGUAL_ASR,
    SimulationConfig,
    ValidationConfig,
    parse_simulation,
)
from voxeval.simulation.timeline import Timeline
from voxeval.systems.base import CALL, SystemContext
from voxeval.systems.call import CallAgent
from voxeval.systems.factory import build_system, missing_capability, open_call, system_class

DEFAULT_METRICS = ["task_completion", "turn_taking"]
DIAGNOSTICS = (
    "authentication_success",
    "response_latency",
    "stt_wer",
    "tool_call_validity",
    "key_entity_accuracy",
    "conversation_finished",
    "fallback_nudge_rate",
    "pre_tool_speech_rate",
    "agent_speech_fidelity_asr",
    "user_speech_fidelity_asr",
    # full-duplex turn handling (scoring.duplex_metrics)
    "yield_latency",
    "barge_in_handling_rate",
    "backchannel_rate",
    "backchannel_yield_rate",
    "false_end_of_turn_rate",
    "talk_over_ratio",
    "false_yield_rate",
    "agent_backchannel_rate",
    # does the agent take up what the caller says when it cuts in (scoring.interruption_uptake)
    "interruption_uptake",
)


def _fault_json(fault: SystemFault | None) -> dict[str, str] | None:
    return None if fault is None else {"cause": fault.cause, "message": str(fault)}


# The parties' turns, attributed for the unit's usage records (see ``_record_call_usage``).
_PARTY_METHODS = ("start", "respond")


def _record_call_usage(ctx: RunContext, unit: WorkUnit, ledger: Ledger) -> None:
    """The HTTP requests, retries and timeouts the agent (the system under test) and the
    simulated caller sent during one call attempt, failed attempts included; ``calls`` are
    their turns; with what their metered models (LLM, ASR, TTS) consumed. Parties that sent
    nothing and ran no metered model (scripted) are not recorded."""
    # unattributed: the engine's voices rendering both parties' speech in audio mode
    for component, label in (
        ("agent", f"system:{unit.system}"),
        ("caller", "simulator"),
        (UNATTRIBUTED, "call_rendering"),
    ):
        used = ledger.get(component)
        if used is None or not (used.requests or used.models):
            continue
        ctx.store.recorder.record_component_usage(unit, label, used)


# Judged call metrics (issue #12): defaults only when the run configures a judge
# (``judge:``) or an audio judge (``audio_judge:``).
JUDGED_METRICS = (
    "faithfulness",
    "conversation_progression",
    "conciseness",
    "speakability",
    "interruption_uptake_judge",
)
AUDIO_JUDGED_METRICS = ("agent_speech_fidelity", "user_speech_fidelity")
# The simulation-validation judge's verdict, stored with the call's scores when judged.
JUDGED_VALIDATION_METRICS = ("user_behavioural_fidelity",)


def default_metrics(judged: bool = False, audio_judged: bool = False) -> list[str]:
    """Task completion, turn-taking and every call diagnostic, plus the judged metrics when
    ``judged`` (a judge is configured: with the simulation-validation verdict) and the
    audio-judged ones when ``audio_judged``. A default that is not a registered metric is a bug
    in voxeval: it raises rather than being skipped, so the metric can never silently drop out
    of every run."""
    wanted = [
        *DEFAULT_METRICS,
        *DIAGNOSTICS,
        *((*JUDGED_METRICS, *JUDGED_VALIDATION_METRICS) if judged else ()),
        *(AUDIO_JUDGED_METRICS if audio_judged else ()),
    ]
    known = set(METRICS.names())
    missing = [m for m in wanted if m not in known]
    if missing:
        raise RuntimeError(
            f"live_call default metrics {missing} are not registered metrics; "
            f"known: {', '.join(sorted(known))}"
        )
    return wanted


def _run_defaults(ctx: RunContext) -> list[str]:
    return default_metrics(ctx.config.judge is not None, ctx.config.audio_judge is not None)


def scoring_asr(configured: ProviderSpec | None, language: str) -> ProviderSpec | str:
    """The scoring ASR of a live-call run: the configured one, else Whisper tiny.en for English
    and the multilingual Whisper base for any other language. An English-only model configured
    for another language is a ConfigError naming ``asr``."""
    english = base_language(language) == "en"
    if configured is None:
        return "whisper-tiny-en" if english else MULTILINGUAL_ASR
    if not english and configured.provider in ENGLISH_ONLY_ASR:
        raise ConfigError(
            f"asr: {configured.provider!r} recognises English only, but the run's language is "
            f"{language!r}; use the multilingual {MULTILINGUAL_ASR!r}"
        )
    return configured


class RecordedTracks(Mapping[str, Audio]):
    """The ``user`` and ``assistant`` tracks of a recorded call, read on first use (most
    metrics never need them); a text-mode call has none."""

    def __init__(self, unit_dir: Path) -> None:
        self._files = {
            who: unit_dir / TRACK_FILES[who]
            for who in ("user", "assistant")
            if (unit_dir / TRACK_FILES[who]).is_file()
        }
        self._read: dict[str, Audio] = {}

    def __getitem__(self, who: str) -> Audio:
        if who not in self._read:
            self._read[who] = read_audio(self._files[who])
        return self._read[who]

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


def build_agent(spec: SystemSpec, ctx: SystemContext | None) -> CallAgent:
    """A fresh call session with the system ``spec`` names (built by the one system factory)."""
    return open_call(build_system(spec, ctx))


@PROTOCOLS.register("live_call")
class LiveCallProtocol(ScoredProtocol[LiveCallRecord, ScoringResources]):
    name: ClassVar[str] = "live_call"
    record_type: ClassVar[type | None] = LiveCallRecord
    system_needs: ClassVar[str | None] = CALL
    scoring_usage: ClassVar[tuple[tuple[str, str], ...]] = (
        ("judge", "judge"),
        ("audio_judge", "audio_judge"),
        ("scoring_asr", "scoring_asr"),
        (UNATTRIBUTED, "scoring"),
    )
    # a failed call still left a partial call: scored on it where a metric can be
    scores_partial_failures: ClassVar[bool] = True

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._suite: ScenarioSuite | None = None
        self._conditions: dict[str, Condition] | None = None
        self._sim: SimulationConfig | None = None

    # ------------------------------------------------------------------ setup
    def suite(self, ctx: RunContext) -> ScenarioSuite:

        language = self.simulation(ctx).language  # the callers' language (simulation.language)
        with self._lock:
            if self._suite is None:
                if ctx.suite is None:
                    raise ConfigError("live_call: the run has no suite")
                trusted = ctx.config.trusted_modules  # python tool hooks may come from these
                self._suite = load_scenario_suite(
                    ctx.suite.path, trusted_modules=trusted, language=language
                )
            return self._suite

    def simulation(self, ctx: RunContext) -> SimulationConfig:
        with self._lock:
            if self._sim is None:
                self._sim = parse_simulation(ctx.config.simulation)
            return self._sim

    def conditions(self, ctx: RunContext) -> dict[str, Condition]:
        with self._lock:
            if self._conditions is None:
                all_conditions = parse_conditions(ctx.config.perturbations)
                wanted = ctx.config.conditions
                if wanted:
                    known = {c.name for c in all_conditions}
                    missing = [w for w in wanted if w not in known]
                    if missing:
                        raise ConfigError(
                            f"conditions: unknown {missing}; defined: {sorted(known)}"
                        )
                    all_conditions = [c for c in all_conditions if c.name in wanted]
                self._conditions = {c.name: c for c in all_conditions}
            return self._conditions

    # ------------------------------------------------------------------ protocol
    def plan(self, ctx: RunContext) -> list[WorkUnit]:
        live_call_scoring(ctx.config)  # a bad scoring: section fails before any call
        for metric in ctx.config.metrics or _run_defaults(ctx):  # a bad default fails here
            try:
                METRICS.lookup(metric)
            except UnknownComponent as exc:
                raise ConfigError(f"metrics: {exc}") from exc
        for system in ctx.config.systems:  # fail before any call on a bad system spec
            try:
                system_class(system)
            except UnknownComponent as exc:
                raise ConfigError(f"system {system.name!r}: {exc}") from exc
            lacking = missing_capability(system, self.name, self.system_needs)
            if lacking is not None:
                raise ConfigError(lacking)
        suite = self.suite(ctx)
        scoring_asr(ctx.config.asr, self.simulation(ctx).language)  # before the first call
        conditions = self.conditions(ctx)
        return [
            WorkUnit(scenario.id, system.name, trial, condition, scenario.category)
            for scenario in suite.scenarios
            for condition in conditions
            for system in ctx.config.systems
            for trial in range(ctx.config.trials)
        ]

    def interact(self, unit: WorkUnit, ctx: RunContext) -> None:
        """Run the call, validate the recording and regenerate it while a gate fails
        (``voxeval.protocols.call_validation``)."""
        unit_dir = ctx.store.folder.unit_dir(unit)
        validation = self.simulation(ctx).validation
        run_validated_call(
            unit_dir,
            validation,
            seed_for=lambda attempt: self._seed(ctx, unit, attempt),
            call_once=lambda seed: self._call_and_record(unit, ctx, seed),
            check=lambda: self._check(unit, ctx, unit_dir, validation),
        )

    def _check(
        self, unit: WorkUnit, ctx: RunContext, unit_dir: Path, validation: ValidationConfig
    ) -> dict[str, GateResult]:
        """The validation gates on the recorded call; what their judge and ASR calls cost is
        recorded with the unit's usage."""
        with usage_ledger() as ledger:
            try:
                return run_gates(
                    validation.gates,
                    read_json(unit_dir / CALL_FILE) or {},
                    lambda: self._record(unit, ctx, unit_dir),
                    self.resources(ctx),
                    asr_speech_gate=validation.asr_speech_gate,
                )
            finally:
                self.record_scoring_usage(ctx, unit, ledger, {})

    @staticmethod
    def _seed(ctx: RunContext, unit: WorkUnit, attempt: int) -> int:
        """The call's seed: the unit's for the first attempt, one derived from it and the
        attempt number for a regeneration (deterministic, distinct per attempt)."""
        keys: tuple[Any, ...] = ("call", unit.item_id, unit.system, unit.trial, unit.condition)
        if attempt > 1:
            keys = (*keys, "attempt", attempt)
        return int(ctx.rng(*keys).integers(2**31))

    def _call_and_record(self, unit: WorkUnit, ctx: RunContext, seed: int) -> SystemFault | None:
        """One call attempt, recorded into the unit folder; the system's fault, if any."""
        suite = self.suite(ctx)
        sim = self.simulation(ctx)
        scenario = suite.get(unit.item_id)
        condition = self.conditions(ctx)[unit.condition]
        tools = ToolRuntime(scenario, suite.tools, suite.trust, suite.tool_arguments)
        with usage_ledger() as ledger:
            try:
                result, caller, agent = self._call(unit, ctx, scenario, condition, tools, seed)
            finally:  # a failed attempt's requests were sent too
                _record_call_usage(ctx, unit, ledger)
        record_call(
            result,
            ctx.store.folder.unit_dir(unit),
            expected_db=scenario.expected_db,
            compare=suite.task_completion,
            meta={
                "scenario": scenario.id,
                "system": unit.system,
                "trial": unit.trial,
                "condition": unit.condition,
                "caller": caller.name,
                "persona": caller.persona.name if caller.persona is not None else None,
                "agent": agent.name,
                "mode": sim.mode,
                "seed": seed,
                "caller_behaviour": behaviour_record(caller),
                "system_fault": _fault_json(result.system_fault),
            },
        )
        return result.system_fault  # recorded: the runner scores it as a failure

    def _call(
        self,
        unit: WorkUnit,
        ctx: RunContext,
        scenario: Scenario,
        condition: Condition,
        tools: ToolRuntime,
        seed: int,
    ) -> tuple[CallResult, AttributedProvider, AttributedProvider]:
        """Build the parties (their requests attributed to them) and run the call."""
        sim = self.simulation(ctx)
        with attributed("agent", calls=0):  # setup, e.g. an ASR warm-up
            built = build_agent(ctx.config.system(unit.system), ctx)
        agent = AttributedProvider(built, "agent", _PARTY_METHODS)
        with attributed("caller", calls=0):
            made = sim.build_caller(ctx, condition, seed)
        caller = AttributedProvider(made, "caller", _PARTY_METHODS)
        caller_voice = agent_voice = None
        if sim.mode == "audio":
            caller_voice, agent_voice = sim.caller_renderer(condition), sim.agent_renderer()
            caller_voice.warm_up()
            agent_voice.warm_up()
        result = run_call(
            scenario,
            caller,
            agent,
            tools,
            mode=sim.mode,
            latency_model=sim.latency_model,
            max_duration_s=sim.max_duration_s,
            agent_timeout_s=sim.agent_timeout_s,
            seed=seed,
            caller_voice=caller_voice,
            agent_voice=agent_voice,
            caller_transform=condition.transform(seed) if sim.mode == "audio" else None,
            line_effects=condition.line_effects(seed) if sim.mode == "audio" else [],
            vad=sim.frame_vad(ctx),
            agent_vad=sim.agent_vad(ctx) if sim.mode == "audio" else None,
            interruption_asr=sim.word_counter(ctx),
            settings=sim.engine_settings(),
            rendering_latency=sim.tts_latency_model,
        )
        return result, caller, agent

    def default_metrics(self, ctx: RunContext) -> list[str]:
        return _run_defaults(ctx)

    def stored_unit(self, unit: WorkUnit, ctx: RunContext) -> StoredUnit[LiveCallRecord]:
        unit_dir: Path = ctx.store.folder.unit_dir(unit)
        try:
            call, timeline, final_db = load_call(unit_dir)
        except FileNotFoundError as exc:
            return StoredUnit(unscorable=str(exc))
        fault = call.get("system_fault")
        if call.get("end_reason") == "error" and not fault:
            # a recording from before faults were told apart: nobody knows whose it was
            return StoredUnit(unscorable=f"the call failed: {call.get('error')}")
        return StoredUnit(
            record=lambda: self._record(unit, ctx, unit_dir, (timeline, final_db)),
            fault_cause=str(fault.get("cause") or "exception") if isinstance(fault, dict) else None,
            # what the validation gates already computed on this call is its score
            scored=stored_gate_scores(unit_dir),
        )

    def _record(
        self,
        unit: WorkUnit,
        ctx: RunContext,
        unit_dir: Path,
        loaded: tuple[Timeline, JSONObject | None] | None = None,
    ) -> LiveCallRecord:
        """The recorded call in ``unit_dir`` as metrics read it (``loaded``: its timeline
        and final database when already read)."""
        if loaded is None:
            _, timeline, final_db = load_call(unit_dir)
        else:
            timeline, final_db = loaded
        suite = self.suite(ctx)
        scenario = suite.get(unit.item_id)
        return LiveCallRecord(
            timeline=timeline,
            final_db=final_db,
            expected_db=scenario.expected_db,
            initial_db=read_json(unit_dir / "initial_db.json"),
            scenario=scenario,
            task_completion=suite.task_completion,
            tracks=RecordedTracks(unit_dir),
            pipeline=system_pipeline(ctx.config.system(unit.system)),
            turn_taking_zero_on_agent_error=(
                live_call_scoring(ctx.config).turn_taking_zero_on_agent_error
            ),
        )

    def build_resources(self, ctx: RunContext) -> ScoringResources:
        """Providers that judge-based call metrics share (scoring ASR, judge, audio judge), made
        on first use. Audio-judged metrics grade per turn and are not repeated."""
        opts = live_call_scoring(ctx.config)
        asr = scoring_asr(ctx.config.asr, self.simulation(ctx).language)

        def judge() -> Judge:
            llm = configured_judge(ctx)
            return counted_judge(llm, max_attempts=opts.judge_attempts, repeats=opts.judge_repeats)

        def audio_judge() -> Judge:
            heard = configured_audio_judge(ctx)
            return counted_judge(
                heard, "audio_judge", modality="audio", max_attempts=opts.judge_attempts
            )

        return ScoringResources(
            asr=lambda: AttributedProvider(
                ctx.provider("asr", asr), "scoring_asr", ("transcribe",)
            ),
            judge=judge,
            audio_judge=audio_judge,
        )

    def summarize(self, ctx: RunContext) -> dict[str, JSONObject]:

        rows = ctx.store.scores.load()
        summary = standard_summary(  # an item is a scenario: its trials and conditions cluster
            rows,
            ctx.config.metrics,
            seed=ctx.seed,
            units=ctx.store.units.status_counts(),
            cluster_unit="scenario",
        )
        add_corpus_wer(summary, rows, "stt_wer")
        units = ctx.store.units.records()
        latencies = response_latencies(rows)
        histograms = latency_histograms(
            {s: {"response_latency_s": [v for *_, v in p]} for s, p in latencies.items()}
        )
        for system, entry in summary.items():
            add_distributions(
                entry,
                latency=histograms.get(system),
                latency_by_turn={
                    "response_latency_s": turn_stats(latencies.get(system, []), seed=ctx.seed)
                },
            )
            for metric in ("task_completion", "turn_taking"):
                stat = entry["overall"].get(metric)
                entry[metric] = (
                    stat
                    if stat is not None
                    else {
                        "mean": None,
                        "ci_low": None,
                        "ci_high": None,
                        "n": 0,
                        "not_run": entry["not_run"].get(metric, "no scores"),
                    }
                )
            by_condition: dict[str, dict[str, list[bool]]] = {}
            for row in rows:
                if row.system != system or row.metric != "task_completion" or not row.ran:
                    continue
                per = by_condition.setdefault(row.condition, {})
                per.setdefault(row.item_id, []).append(row.value == 1.0)
            curves = {
                cond: passk_summary(per, seed=ctx.seed)
                for cond, per in sorted(by_condition.items())
            }
            main = curves.get("clean") or next(iter(curves.values()), None)
            entry["pass_at_k"] = main["pass_at_k"] if main else []
            entry["pass_hat_k"] = main["pass_hat_k"] if main else []
            entry["pass_definition"] = "a trial passes when task_completion == 1"
            entry["passk_by_condition"] = curves
            # Perturbation effects, variance components and CI width vs trials (issue #12).
            system_rows = [row for row in rows if row.system == system]
            entry.update(call_statistics(system_rows, seed=ctx.seed, metrics=ctx.config.metrics))
            system_units = [unit for unit in units if unit.system == system]
            entry["composites"] = eva_composites(system_rows, system_units, seed=ctx.seed)
            ran = [u for u in system_units if u.status != "planned"]
            basis = latency_basis(ctx.store.folder.unit_dir(u) for u in ran)
            if basis is not None:
                entry["latency_basis"] = basis
            timing = adapter_timing(ctx.store.folder.unit_dir(u) for u in ran)
            if timing is not None:  # turn-based: the adapter's settings decide these metrics
                entry["adapter_timing"] = timing
            entry["simulation_validation"] = validation_summary(
                (ctx.store.folder.unit_dir(u) for u in ran), self.simulation(ctx).validation
            )
        return summary
