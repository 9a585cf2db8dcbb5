"""The single-turn spoken-query protocol (WildSpeech): every rendered query is played to every
system once per trial; the spoken reply is transcribed k times and scored.

Unit folder (``items/<item>[@<condition>]/<system>/<trial>/``):
  - ``user.wav``       the query audio the system heard,
  - ``assistant.wav``  the spoken reply (absent when the system produced no audio),
  - ``reply.json``     text channel, timings and details of the reply,
  - ``transcripts.json`` the k scoring transcripts (written at scoring time),
  - ``scores.json``    every metric (written by the runner).
Scoring reads only these files, so ``voxeval score`` re-scores without calling a system.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from voxeval import atomic_files
from voxeval.api.comparison import Comparison
from voxeval.api.context import RunContext
from voxeval.api.protocol import PROTOCOLS
from voxeval.api.scored_protocol import ScoredProtocol, StoredUnit, counted_judge
from voxeval.api.system_usage import SystemMeter, metering_reply
from voxeval.api.work_unit import WorkUnit
from voxeval.audio import Audio, audio_to_wav_bytes, read_audio
from voxeval.benchmarks.build import profile_voice_notes, suite_engine_confounds
from voxeval.config import ProviderSpec, RunConfig, format_validation_error
from voxeval.errors import (
    ConfigError,
    ProviderUnavailable,
    VoxevalError,
)
from voxeval.json_types import JSONObject
from voxeval.protocols import single_turn_pairwise as pairwise
from voxeval.protocols.input_intelligibility import (
    FALLBACK_INPUT_ASR,
    input_asr_spec,
    input_error_rates,
)
from voxeval.protocols.single_turn_breakdowns import item_attributes
from voxeval.protocols.single_turn_items import RenderedItems, RenderedQuery
from voxeval.protocols.single_turn_replies import (
    ASSISTANT_WAV,
    REPLY_JSON,
    USER_WAV,
    SingleTurnReplies,
    link_into,
    stored_reply,
)
from voxeval.protocols.single_turn_summary import summarize_single_turn
from voxeval.providers.base import ASR, LLM
from voxeval.providers.factory import availability
from voxeval.providers.runtime.async_dispatch import run_blocking
from voxeval.providers.usage.usage_ledger import (
    AttributedProvider,
    sends_requests,
)
from voxeval.scoring.comparison_result import ComparisonResult
from voxeval.scoring.judge import Judge
from voxeval.scoring.metric_runner import is_transient_fault
from voxeval.scoring.replies.checklist import checklist_judging
from voxeval.scoring.replies.checklist_settings import (
    ChecklistJudging,
    JudgeProtocol,
    template_from_file,
)
from voxeval.scoring.replies.reply_record import ReplyRecord, ScoringResources
from voxeval.scoring.replies.transcripts import TranscriptSettings
from voxeval.scoring.score import Score
from voxeval.systems.base import REPLY, AsyncTurnSystem, Reply, Turn, TurnSystem
from voxeval.systems.cascade import TINY_BASELINE_LABEL, CascadeOptions

DEFAULT_METRICS: tuple[str, ...] = (
    "checklist",
    "assertions",
    "mos",
    "wer",
    "duration",
    "speaking_rate",
    "language",
)
DEFAULT_SCORING_ASR = ProviderSpec(provider="whisper-tiny-en")
DEFAULT_MOS = ProviderSpec(provider="dnsmos")
# Spoken-language identification of replies (language metric, judge gate): multilingual.
LANGUAGE_ID_ASR = ProviderSpec(provider="whisper-base")


class SingleTurnScoring(BaseModel):
    """The config's ``scoring:`` section for this protocol."""

    model_config = ConfigDict(extra="forbid")
    k: int = Field(default=3, ge=1, le=10, description="transcripts per reply")
    max_decodes: int = Field(default=10, ge=1, le=30, description="ASR decodes to find k")
    temperature: float = Field(default=0.5, gt=0.0, le=1.0, description="sampling temperature")
    repeat_limit: int = Field(default=3, ge=2, description="identical sentences = hallucination")
    judge_attempts: int = Field(default=3, ge=1, le=10, description="calls per judged transcript")
    language: str = "en"
    # The checklist judge's setting: voxeval's own, or the WildSpeech-Bench reference sampling
    # and general checklist; judge_prompt: a prompt template file ({query}, {response},
    # {checklist}) in place of the built-in prompt.
    judge_protocol: JudgeProtocol = "voxeval"
    judge_prompt: str | None = None

    @field_validator("judge_prompt")
    @classmethod
    def _readable_prompt(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                template_from_file(Path(value))
            except ConfigError as exc:  # reported under the field, at validate time
                raise ValueError(str(exc).removeprefix("scoring.judge_prompt: ")) from exc
        return value

    def checklist_judging(self) -> ChecklistJudging:
        prompt = Path(self.judge_prompt) if self.judge_prompt else None
        return checklist_judging(self.judge_protocol, prompt)


def judge_llm(ctx: RunContext, judging: ChecklistJudging) -> LLM:
    """The configured judge; for a setting that samples with ``top_p`` (the reference), the
    same judge with ``top_p`` in its request body (an OpenAI-compatible judge: the option
    travels in ``extra_body``)."""
    if judging.top_p is None:
        llm = ctx.judge()
        if llm is None:
            raise ProviderUnavailable(ctx.judge_unavailable_reason() or "no judge")
        return llm
    spec = ctx.config.judge
    if spec is None:
        raise ProviderUnavailable(ctx.judge_unavailable_reason() or "no judge")
    if spec.provider != "openai":
        raise ProviderUnavailable(
            f"scoring.judge_protocol {judging.protocol!r} samples with top_p "
            f"{judging.top_p:g}, which needs an OpenAI-compatible judge (provider: openai); "
            f"the judge is {spec.provider!r}"
        )
    options = spec.options()
    extra = {**(options.get("extra_body") or {}), "top_p": judging.top_p}
    sampled = ProviderSpec(provider=spec.provider, **{**options, "extra_body": extra})
    try:
        return ctx.provider("llm", sampled)
    except VoxevalError as exc:
        raise ProviderUnavailable(f"judge unavailable: {exc}") from exc


def scoring_options(ctx: RunContext) -> SingleTurnScoring:
    try:
        return SingleTurnScoring.model_validate(ctx.config.scoring)
    except ValidationError as exc:
        raise ConfigError(format_validation_error("config scoring", exc)) from exc


@PROTOCOLS.register("single_turn")
class SingleTurnProtocol(ScoredProtocol[ReplyRecord, ScoringResources]):
    name: ClassVar[str] = "single_turn"
    record_type: ClassVar[type | None] = ReplyRecord
    system_needs: ClassVar[str | None] = REPLY
    comparison_steps: ClassVar[tuple[str, ...]] = (pairwise.PAIRWISE,)
    # interact_async commits its start and waits on its system inside ctx.system_call_slots:
    # the runner may prepare more units than ``concurrency`` (see ``execute_units``)
    uses_system_call_slots: ClassVar[bool] = True

    def __init__(self) -> None:
        super().__init__()
        self._items = RenderedItems()
        self._replies = SingleTurnReplies()  # stores replies, keeps them for their scoring
        # whether each system (by name) answers only by blocking calls: learnt from its first
        # unit, then such units take one worker thread for their whole interaction
        self._blocking: dict[str, bool] = {}

    # -- plan ---------------------------------------------------------------------------------

    def items(self, ctx: RunContext, *, build: bool = True) -> dict[str, RenderedQuery]:
        """The rendered queries by id (built on first use when ``build``)."""
        return self._items.by_id(ctx, build=build)

    def plan(self, ctx: RunContext) -> list[WorkUnit]:
        wanted = set(ctx.config.conditions) if ctx.config.conditions else None
        units = []
        for item in self.items(ctx).values():  # item-major: --limit N keeps N whole items
            if wanted is not None and item.condition not in wanted:
                continue
            for system in ctx.config.systems:
                for trial in range(ctx.config.trials):
                    units.append(
                        WorkUnit(
                            item_id=item.key,
                            system=system.name,
                            trial=trial,
                            condition=item.condition,
                            category=item.query.category,
                        )
                    )
        if not units:
            raise ConfigError(
                f"suite {ctx.config.suite!r} has no items for conditions {sorted(wanted or [])}"
            )
        return units

    # -- interact -----------------------------------------------------------------------------

    def interact(self, unit: WorkUnit, ctx: RunContext) -> None:
        system, item, unit_dir, user_audio = self._prepare(unit, ctx)
        self._reply_and_conclude(unit, ctx, system, item, unit_dir, user_audio)

    def _interact_in_thread(self, unit: WorkUnit, ctx: RunContext) -> None:
        """A unit whose system blocks, from input to stored reply in one worker thread: its
        start is committed (the attempt counts) once its input is read, as in
        ``interact_async``."""
        system, item, unit_dir, user_audio = self._prepare(unit, ctx)
        ctx.store.recorder.start(unit)
        self._reply_and_conclude(unit, ctx, system, item, unit_dir, user_audio)

    def _reply_and_conclude(
        self,
        unit: WorkUnit,
        ctx: RunContext,
        system: TurnSystem,
        item: RenderedQuery,
        unit_dir: Path,
        user_audio: Audio,
    ) -> None:
        turn = Turn(role="user", audio=user_audio, item_id=item.key)
        started = time.perf_counter()
        reply: Reply | None = None
        meter = SystemMeter()
        try:
            with metering_reply() as meter:
                reply = system.reply([turn])
        except Exception as exc:
            wall_s = time.perf_counter() - started
            self._replies.conclude(unit, ctx, item, unit_dir, wall_s, None, exc, meter, user_audio)
            raise AssertionError("unreachable") from exc  # conclude raised
        wall_s = time.perf_counter() - started
        self._replies.conclude(unit, ctx, item, unit_dir, wall_s, reply, None, meter, user_audio)

    async def interact_async(self, unit: WorkUnit, ctx: RunContext) -> None:
        """``interact`` from an asyncio task: a system with ``areply`` is awaited (no thread
        waits on it); reading the input and writing the reply run in a worker thread. The
        unit reads its input first, then takes one of ``ctx.system_call_slots`` (when the
        runner set them), commits its start (``ctx.commit_start``: the attempt counts from
        here) and waits on its system; it gives the slot back with the reply, so the next
        unit, already prepared, calls the system at once.

        A system that only blocks (no coroutine ``areply``) holds a worker thread for its
        reply anyway: after its first unit, its units take a slot and then do everything,
        from reading the input to storing the reply, in one worker thread. That is one
        hand-over between threads instead of four, each a wake-up of an idle thread (tens
        of microseconds each, more on a virtual machine), and costs the slot the few
        milliseconds of reading and storing, against a blocking system's seconds."""
        slots = ctx.system_call_slots
        if self._blocking.get(unit.system):
            async with slots if slots is not None else contextlib.nullcontext():
                await run_blocking(self._interact_in_thread, unit, ctx)
            return
        system, item, unit_dir, user_audio = await asyncio.to_thread(self._prepare, unit, ctx)
        turn = Turn(role="user", audio=user_audio, item_id=item.key)
        reply: Reply | None = None
        meter = SystemMeter()
        native = system.areply if isinstance(system, AsyncTurnSystem) else None
        is_async = native is not None and asyncio.iscoroutinefunction(native)
        self._blocking[unit.system] = not is_async
        failure: Exception | None = None
        async with slots if slots is not None else contextlib.nullcontext():
            await ctx.commit_start(unit)  # outside the try: an index error is not the system's
            started = time.perf_counter()  # the system's time, not the wait for a slot
            try:
                with metering_reply() as meter:
                    if is_async:
                        assert native is not None
                        reply = await native([turn])
                    else:
                        reply = await run_blocking(system.reply, [turn])
            except Exception as exc:
                failure = exc
            wall_s = time.perf_counter() - started
        # the slot is free again: the reply (or the fault) is stored while the next unit talks
        await asyncio.to_thread(
            self._replies.conclude,
            unit,
            ctx,
            item,
            unit_dir,
            wall_s,
            reply,
            failure,
            meter,
            user_audio,
        )
        if failure is not None:
            raise AssertionError("unreachable") from failure  # conclude raised

    def _prepare(
        self, unit: WorkUnit, ctx: RunContext
    ) -> tuple[TurnSystem, RenderedQuery, Path, Audio]:
        """The system, the item, the unit folder and the query audio (linked into the folder)."""
        item = self._items.of_unit(ctx, unit)
        system = ctx.turn_system(unit.system)
        source = item.audio_path
        unit_dir = ctx.store.folder.unit_dir(unit)
        user_audio = read_audio(source)
        if source.suffix.lower() != ".wav" or not link_into(source, unit_dir / USER_WAV):
            atomic_files.write_bytes_atomic(unit_dir / USER_WAV, audio_to_wav_bytes(user_audio))
        return system, item, unit_dir, user_audio

    # -- score --------------------------------------------------------------------------------

    def default_metrics(self, ctx: RunContext) -> list[str]:
        return list(DEFAULT_METRICS)

    def release(self) -> None:
        """Forget the run's scoring resources and any reply kept for scoring
        (``RunContext.close``)."""
        super().release()
        self._replies.forget_all()

    def build_resources(self, ctx: RunContext) -> ScoringResources:
        opts = scoring_options(ctx)
        judging = opts.checklist_judging()

        def judge() -> Judge:
            return counted_judge(
                judge_llm(ctx, judging),
                max_attempts=opts.judge_attempts,
                temperature=judging.temperature,
                max_tokens=judging.max_tokens,
            )

        def asr() -> AttributedProvider:
            found = ctx.provider("asr", ctx.config.asr or DEFAULT_SCORING_ASR)
            # embedded too: the audio it decodes is accounted (priced at 0)
            return AttributedProvider(found, "scoring_asr", ("transcribe",))

        def language_id() -> ASR:
            # the model itself (the call cache wraps transcription only)
            return ctx.provider("asr", ctx.config.language_id or LANGUAGE_ID_ASR, cache=False)

        return ScoringResources(
            asr=asr,
            judge=judge,
            mos=lambda: ctx.provider("mos", ctx.config.mos or DEFAULT_MOS),
            language_id=language_id,
            checklist_judging=judging,
            transcript_settings=TranscriptSettings(
                k=opts.k,
                max_decodes=opts.max_decodes,
                temperature=opts.temperature,
                repeat_limit=opts.repeat_limit,
                language=opts.language,
            ),
        )

    def record(
        self,
        unit: WorkUnit,
        ctx: RunContext,
        reply: JSONObject | None = None,
        *,
        reply_audio: tuple[Audio | None] | None = None,
    ) -> ReplyRecord:
        """The stored reply of ``unit`` as a record for the metrics (``reply``: its reply.json,
        ``reply_audio``: its assistant.wav, or (None,) for none, when the caller has them)."""
        item = self._items.of_unit(ctx, unit)
        unit_dir = ctx.store.folder.unit_dir(unit)
        if reply is None:
            reply = stored_reply(unit_dir)
        text = reply.get("text")
        if reply_audio is None:
            assistant = unit_dir / ASSISTANT_WAV
            reply_audio = (read_audio(assistant) if assistant.is_file() else None,)
        return ReplyRecord(
            item_id=unit.item_id,
            query=item.query.text,
            reply_audio=reply_audio[0],
            reply_text=text if isinstance(text, str) else None,  # reply.json: str or null
            category=item.query.category,
            checklist=tuple(item.query.checklist),
            assertions=tuple(item.query.assertions),
            expected_language=self.resources(ctx).transcript_settings.language or "en",
            unit_dir=unit_dir,
            # Common random numbers: every system's reply to an item is decoded and judged with
            # the same seeds, so differences between systems are not sampling noise.
            seed=ctx.rng(unit.item_id, unit.trial).integers(0, 2**20).item(),
            meta={"timing": reply.get("timing") or {}},
        )

    def stored_unit(self, unit: WorkUnit, ctx: RunContext) -> StoredUnit[ReplyRecord]:
        unit_dir = ctx.store.folder.unit_dir(unit)
        fresh = self._replies.take(unit_dir)  # just written by this process
        reply = fresh[0] if fresh is not None else stored_reply(unit_dir)
        fault = reply.get("system_fault")
        audio = None if fresh is None else fresh[1:]
        return StoredUnit(
            record=lambda: self.record(unit, ctx, reply, reply_audio=audio),
            fault_cause=str(fault.get("cause") or "exception") if isinstance(fault, dict) else None,
        )

    def judge_parse_failures(self, scores: Mapping[str, Score]) -> int:
        """The checklist judge's unparsable answers."""
        judged = scores.get("checklist")
        return int(judged.details.get("parse_failures") or 0) if judged is not None else 0

    # -- compare (across systems; see voxeval.protocols.comparison) --------------------------------

    def default_comparisons(self, config: RunConfig) -> list[str]:
        return pairwise.default_steps(config)

    def check_comparisons(self, config: RunConfig, steps: Sequence[str]) -> list[str]:
        return pairwise.step_problems(config, steps)

    def comparisons(
        self, ctx: RunContext, steps: Sequence[str], units: Sequence[WorkUnit]
    ) -> list[Comparison]:
        if pairwise.PAIRWISE not in steps:
            return []
        return pairwise.pairwise_comparisons(ctx.config, units)

    def compare(self, comparison: Comparison, ctx: RunContext) -> ComparisonResult:
        if comparison.step != pairwise.PAIRWISE:
            raise VoxevalError(f"single_turn has no comparison step {comparison.step!r}")
        metrics = list(ctx.config.metrics or DEFAULT_METRICS)
        return pairwise.compare_pair(comparison, ctx.store, metrics)

    def summarize_comparisons(self, ctx: RunContext) -> dict[str, JSONObject]:
        records = ctx.store.comparisons.records(pairwise.PAIRWISE)
        if not records:
            return {}
        summary = pairwise.summarize_pairwise(
            records, seed=ctx.seed, query_ids=_query_ids(self._items.stored(ctx))
        )
        return {pairwise.PAIRWISE: summary}

    # -- summarize ----------------------------------------------------------------------------

    def confounded(self, ctx: RunContext) -> JSONObject:
        """Speaker-profile dimensions confounded with the TTS engine in the rendered suite."""
        return dict(suite_engine_confounds([i.entry for i in self._items.stored(ctx).values()]))

    def voices(self, ctx: RunContext) -> JSONObject:
        """The voice of each synthesized profile (outside the synthetic_voice condition) and
        whether it is natural: ``{profile: {voice, engine, naturalness, note}}``."""
        return dict(profile_voice_notes([i.entry for i in self._items.stored(ctx).values()]))

    def input_intelligibility(self, ctx: RunContext) -> JSONObject:
        """The input ASR's WER (Whisper base when installed) and DNSMOS of the rendered
        queries' audio, per condition and profile (see ``input_intelligibility``); empty when
        no rendered suite is at hand."""
        items = self._items.stored(ctx)
        if not items:
            return {}
        spec = input_asr_spec(ctx.config.asr)
        try:
            if sends_requests(ctx.provider("asr", spec, cache=False)):
                # a remote scoring ASR would send requests no unit accounts for: the embedded
                # Whisper tiny.en measures the input instead (and is named in the result)
                spec = FALLBACK_INPUT_ASR
            asr = ctx.provider("asr", spec)
            dnsmos = ProviderSpec(provider="dnsmos")
            mos = ctx.provider("mos", dnsmos) if availability("mos", dnsmos).available else None
            rates = input_error_rates(items, asr, seed=ctx.seed, mos=mos)
            return {
                c: {
                    **stat,
                    "asr": ProviderSpec.model_validate(
                        {"provider": spec} if isinstance(spec, str) else spec
                    ).provider,
                }
                for c, stat in rates.items()
            }
        except Exception as exc:  # a report is still written; the reason is shown instead
            if not isinstance(exc, VoxevalError) and not is_transient_fault(exc):
                raise
            return {"not_run": f"the scoring ASR failed: {exc}"}

    def summarize(self, ctx: RunContext) -> dict[str, JSONObject]:
        items = self._items.stored(ctx)
        subcategories = {k: v.query.subcategory for k, v in items.items() if v.query.subcategory}
        query_ids = _query_ids(items)
        metrics = list(ctx.config.metrics or DEFAULT_METRICS)
        return summarize_single_turn(
            ctx,
            metrics,
            subcategories,
            _system_labels(ctx),
            query_ids=query_ids,
            attributes={k: item_attributes(v) for k, v in items.items()},
            reply_file=REPLY_JSON,
        )

    def item_attributes(self, ctx: RunContext) -> dict[str, dict[str, str]]:
        """Rendered item id -> its reporting attributes (the extra ``scores.csv`` columns)."""
        return {k: item_attributes(v) for k, v in self._items.stored(ctx).items()}


def _system_labels(ctx: RunContext) -> dict[str, str]:
    """Labels shown next to system names (the embedded cascade is a tiny baseline)."""

    labels: dict[str, str] = {}
    for spec in ctx.config.systems:
        if spec.type == "cascade":
            try:
                opts = CascadeOptions.model_validate(spec.options())
            except ValidationError:
                continue
            default = CascadeOptions()
            if (opts.asr, opts.llm, opts.tts) == (default.asr, default.llm, default.tts):
                labels[spec.name] = TINY_BASELINE_LABEL
    return labels


def _query_ids(items: Mapping[str, RenderedQuery]) -> dict[str, str]:
    """Rendered item id -> its query id (CIs resample whole queries)."""
    return {k: v.query.id for k, v in items.items()}
