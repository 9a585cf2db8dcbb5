"""The multi-turn dialogue protocol (MTalk-Bench): a system answers each user turn of a
dialogue in order, hearing the whole history (the user's earlier turns with audio and text,
its own earlier replies); the finished dialogue is judged against its rubric criteria.

Unit folder (``items/<dialogue>/<system>/<trial>/``):
  - ``dialogue.json``  the dialogue as the system answered it (read by the arena step too):
    ``{"dialogue", "system", "trial", "dimension", "turns": [{"index", "user_text",
    "user_audio", "reply_text", "reply_audio", "reply_duration_s", "timing"}]}`` (a turn a
    replay answered from a released transcript alone also has ``"reply_transcript_only":
    true``; a user turn without a recording has ``"user_audio": null``),
  - ``reply_<n>.wav``  the spoken reply to user turn n,
  - ``system_fault.json`` the system's fault, when it failed (the turns before it are kept),
  - ``turns.partial.json`` while the unit is under way: the turns answered so far, so an
    interrupted unit goes on from the first unanswered turn instead of starting again.
Scoring reads only these files (and the suite's criteria): ``voxeval score`` never calls a
system.

A user turn without a recording (a transcript-only import) is passed as its words alone; a
system that cannot answer it fails the unit on our side (cause ``input``), not as its fault.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from voxeval import atomic_files
from voxeval.api.comparison import Comparison
from voxeval.api.context import RunContext
from voxeval.api.protocol import PROTOCOLS
from voxeval.api.reply_faults import reply_failed
from voxeval.api.scored_protocol import (
    ScoredProtocol,
    StoredUnit,
    configured_audio_judge,
    configured_judge,
    counted_judge,
)
from voxeval.api.system_usage import SystemMeter, metering_reply, record_system_usage
from voxeval.api.work_unit import WorkUnit
from voxeval.audio import Audio, audio_to_wav_bytes, read_audio
from voxeval.benchmarks.mtalk.dialogue import Dialogue, strip_tags, turn_item_id
from voxeval.benchmarks.mtalk.dialogue_suite import DialogueSuite, load_dialogue_suite
from voxeval.benchmarks.mtalk.transcript_cues import JudgedFrom, cue_warnings
from voxeval.config import ProviderSpec, RunConfig, format_validation_error
from voxeval.errors import (
    ConfigError,
    SystemFault,
    VoxevalError,
)
from voxeval.json_types import JSONObject, JSONValue
from voxeval.protocols.arena import multi_turn_arena as arena
from voxeval.protocols.arena.inputs import load_dialogue, render_segments, turn_segments
from voxeval.protocols.multi_turn_summary import summarize_multi_turn
from voxeval.runformat import DialogueFaultFile, DialogueFile, record_data
from voxeval.scoring.comparison_result import ComparisonResult
from voxeval.scoring.dialogues.dialogue_record import (
    DialogueRecord,
    DialogueScoringResources,
    DialogueTurn,
    RubricCriterion,
)
from voxeval.scoring.judge import Judge
from voxeval.scoring.score import Score
from voxeval.systems.base import REPLY, Reply, Turn

DEFAULT_METRICS: tuple[str, ...] = ("rubric", "rubric_turns")
DIALOGUE_JSON = "dialogue.json"
FAULT_JSON = "system_fault.json"
PARTIAL_JSON = "turns.partial.json"
CONDITION = "clean"
DEFAULT_REPLY_ASR = ProviderSpec(provider="whisper-tiny-en")


class TranscriptOnlyTurn(VoxevalError):
    """A system could not answer a user turn that has no recording: an input fault."""


def reply_wav(index: int) -> str:
    return f"reply_{index}.wav"


def rubric_audio_wav(turns: int) -> str:
    """The dialogue's first ``turns`` turns as the rubric's audio judge heard them."""
    return f"rubric_audio.t{turns}.wav"


class RubricOptions(BaseModel):
    """``scoring.rubric``: what the rubric metrics' judge gets. ``mode: text`` (default) the
    annotated transcript to ``judge:``; ``audio`` the dialogue's audio to ``audio_judge:``
    (cues spoken by ``cue_tts``). ``protocol: reference`` makes the reference's two calls per
    dialogue (general and sample prompts), from audio."""

    model_config = ConfigDict(extra="forbid")
    protocol: Literal["voxeval", "reference"] = "voxeval"
    mode: Literal["text", "audio"] = "text"
    cue_tts: str = Field(default="piper", min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _reference_hears(cls, data: JSONValue) -> JSONValue:
        if isinstance(data, dict) and data.get("protocol") == "reference":
            if data.get("mode", "audio") != "audio":
                raise ValueError(
                    "protocol reference judges from audio (the dataset's rubric prompts carry "
                    "no transcript): leave mode out or set mode: audio"
                )
            data = {**data, "mode": "audio"}
        return data


class MultiTurnScoring(BaseModel):
    """The config's ``scoring:`` section for this protocol."""

    model_config = ConfigDict(extra="forbid")
    judge_attempts: int = Field(default=3, ge=1, le=10, description="calls per judged answer")
    judge_repeats: int = Field(default=1, ge=1, le=10, description="independent gradings")
    arena: dict[str, Any] | None = Field(
        default=None, description="options of the arena comparison step (checked by it)"
    )
    rubric: RubricOptions = Field(default_factory=RubricOptions)


def scoring_options(ctx: RunContext) -> MultiTurnScoring:
    try:
        return MultiTurnScoring.model_validate(ctx.config.scoring)
    except ValidationError as exc:
        raise ConfigError(format_validation_error("config scoring", exc)) from exc


def transcript_only(reply: Reply) -> bool:
    """A replayed reply whose recording is absent: its released text is the whole reply
    (labelled, not a system fault; see ``systems.replay``)."""
    return bool(reply.details.get("transcript_only")) and bool((reply.text or "").strip())


def _turn_json(
    index: int, dialogue: Dialogue, reply: Reply | None, wall_s: float | None
) -> JSONObject:
    turn = dialogue.turns[index - 1]
    has_audio = reply is not None and reply.audio is not None and not reply.audio.is_empty()
    timing: JSONObject = {}
    if reply is not None:
        timing = {**reply.timing, "wall_s": wall_s}
    label = {"reply_transcript_only": True} if reply is not None and not has_audio else {}
    return {
        "index": index,
        "user_text": turn.transcript,
        "user_audio": turn.audio,
        "reply_text": None if reply is None else reply.text,
        "reply_audio": reply_wav(index) if has_audio else None,
        "reply_duration_s": reply.audio.duration if has_audio and reply and reply.audio else None,
        "timing": timing,
        **label,
    }


def _history_turn(stored: JSONObject, unit_dir: Path) -> Turn:
    audio_name, text = stored.get("reply_audio"), stored.get("reply_text")
    audio = read_audio(unit_dir / str(audio_name)) if audio_name else None
    return Turn(role="assistant", audio=audio, text=text if isinstance(text, str) else None)


def _finish(unit_dir: Path, header: JSONObject, turns: list[JSONObject]) -> None:
    """Write the dialogue as answered (``turns``) and drop what an earlier attempt left."""
    answered = {str(t["reply_audio"]) for t in turns if t.get("reply_audio")}
    for stale in unit_dir.glob("reply_*.wav"):  # replies of an earlier, longer attempt
        if stale.name not in answered:
            stale.unlink()
    path = unit_dir / DIALOGUE_JSON
    dialogue = record_data(DialogueFile, {**header, "turns": [*turns]}, path)  # validated
    atomic_files.write_json_atomic(path, dialogue)
    (unit_dir / PARTIAL_JSON).unlink(missing_ok=True)


@dataclass(frozen=True)
class _FailedTurn:
    """The user turn a system failed to answer, and how that failure is stored."""

    unit_dir: Path
    header: JSONObject
    dialogue: Dialogue
    done: list[JSONObject]
    index: int
    started: float

    def store(self, fault: SystemFault) -> None:
        """The dialogue up to the failed turn, and the fault (``system_fault.json``)."""
        failed = _turn_json(self.index, self.dialogue, None, None)
        failed["timing"] = {"wall_s": time.perf_counter() - self.started}
        _finish(self.unit_dir, self.header, [*self.done, failed])
        path = self.unit_dir / FAULT_JSON
        fault_file: JSONObject = {"cause": fault.cause, "message": str(fault), "turn": self.index}
        atomic_files.write_json_atomic(path, record_data(DialogueFaultFile, fault_file, path))

    def transcript_only(self, system: str) -> Callable[[Exception], Exception]:
        def fault(exc: Exception) -> Exception:
            return TranscriptOnlyTurn(
                f"dialogue {self.dialogue.id!r} turn {self.index} has no recording "
                f"(transcript-only); system {system!r} could not answer its words alone: {exc}"
            )

        return fault


@PROTOCOLS.register("multi_turn")
class MultiTurnProtocol(ScoredProtocol[DialogueRecord, DialogueScoringResources]):
    name: ClassVar[str] = "multi_turn"
    record_type: ClassVar[type | None] = DialogueRecord
    system_needs: ClassVar[str | None] = REPLY
    comparison_steps: ClassVar[tuple[str, ...]] = (arena.ARENA,)

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._suite: DialogueSuite | None = None

    # -- plan ---------------------------------------------------------------------------------

    def suite(self, ctx: RunContext) -> DialogueSuite:
        with self._lock:
            if self._suite is None:
                ref = ctx.suite.path if ctx.suite is not None else ctx.config.suite
                self._suite = load_dialogue_suite(ref)
            return self._suite

    def plan(self, ctx: RunContext) -> list[WorkUnit]:
        wanted = set(ctx.config.conditions or [CONDITION])
        if CONDITION not in wanted:
            raise ConfigError(
                f"suite {ctx.config.suite!r}: the multi_turn protocol has only the "
                f"{CONDITION!r} condition (asked: {sorted(wanted)})"
            )
        units = []
        for dialogue in self.suite(ctx).dialogues:  # dialogue-major: --limit keeps dialogues
            for system in ctx.config.systems:
                for trial in range(ctx.config.trials):
                    units.append(
                        WorkUnit(
                            item_id=dialogue.id,
                            system=system.name,
                            trial=trial,
                            condition=CONDITION,
                            category=dialogue.dimension,
                        )
                    )
        return units

    def _dialogue(self, ctx: RunContext, unit: WorkUnit) -> Dialogue:
        found = self.suite(ctx).by_id().get(unit.item_id)
        if found is None:
            raise VoxevalError(f"dialogue {unit.item_id!r} is not in suite {ctx.config.suite!r}")
        return found

    # -- interact -----------------------------------------------------------------------------

    def interact(self, unit: WorkUnit, ctx: RunContext) -> None:
        dialogue = self._dialogue(ctx, unit)
        system = ctx.turn_system(unit.system)
        unit_dir = ctx.store.folder.unit_dir(unit)
        (unit_dir / FAULT_JSON).unlink(missing_ok=True)
        header: JSONObject = {
            "dialogue": dialogue.id,
            "system": unit.system,
            "trial": unit.trial,
            "dimension": dialogue.dimension,
        }
        done = self._resumed_turns(unit_dir, header, dialogue)
        history: list[Turn] = []
        for index, stored in enumerate(done, 1):  # resumed turns are numbered from 1
            history += [self._user_turn(dialogue, index), _history_turn(stored, unit_dir)]
        for index in range(len(done) + 1, len(dialogue.turns) + 1):
            history.append(self._user_turn(dialogue, index))
            started = time.perf_counter()
            reply: Reply | None = None
            meter = SystemMeter()
            heard = history[-1].audio
            try:
                with metering_reply() as meter:
                    reply = system.reply(list(history))
                silent = reply.audio is None or reply.audio.is_empty()
                if silent and not transcript_only(reply):
                    raise SystemFault(
                        f"system {unit.system!r} answered turn {index} without audio",
                        cause="no_audio",
                    )
            except Exception as exc:
                turn = _FailedTurn(unit_dir, header, dialogue, done, index, started)
                reply_failed(
                    ctx,
                    unit,
                    exc,
                    who=f"system {unit.system!r} at turn {index}",
                    meter=meter,
                    heard=heard,
                    reply=reply,
                    store_fault=turn.store,
                    # the turn has no recording (a transcript-only import): the system had
                    # only its words, so its failure is our input's, not the system's
                    input_fault=turn.transcript_only(unit.system) if heard is None else None,
                )
            wall_s = time.perf_counter() - started
            if reply.audio is not None and not reply.audio.is_empty():
                atomic_files.write_bytes_atomic(
                    unit_dir / reply_wav(index), audio_to_wav_bytes(reply.audio)
                )
            stored = _turn_json(index, dialogue, reply, wall_s)
            done.append(stored)
            atomic_files.write_json_atomic(unit_dir / PARTIAL_JSON, {**header, "turns": [*done]})
            record_system_usage(ctx, unit, reply.details, meter, heard=heard, spoke=reply.audio)
            history.append(Turn(role="assistant", audio=reply.audio, text=reply.text))
        _finish(unit_dir, header, done)

    @staticmethod
    def _user_turn(dialogue: Dialogue, index: int) -> Turn:
        """The user's turn as the system gets it: the recording and the spoken words. The
        annotations (``[phone ringing]``, ``<anxious tone>``) are left out of the text: they
        name the very cues the system is tested on hearing; the judges see them."""
        turn = dialogue.turns[index - 1]
        audio = read_audio(turn.audio) if turn.audio else None
        return Turn(
            role="user",
            audio=audio,
            text=strip_tags(turn.transcript),
            item_id=turn_item_id(dialogue.id, index),
        )

    @staticmethod
    def _resumed_turns(unit_dir: Path, header: JSONObject, dialogue: Dialogue) -> list[JSONObject]:
        """Turns answered by an interrupted earlier attempt of this unit (same dialogue,
        system and trial, the same user turns, every reply file present); otherwise nothing."""
        partial = atomic_files.read_json(unit_dir / PARTIAL_JSON)
        if not isinstance(partial, dict) or any(partial.get(k) != v for k, v in header.items()):
            return []
        turns = partial.get("turns")
        if not isinstance(turns, list):
            return []
        kept: list[JSONObject] = []
        for expected, stored in enumerate(turns[: len(dialogue.turns)], 1):
            if not isinstance(stored, dict) or stored.get("index") != expected:
                break
            audio = stored.get("reply_audio")
            said = dialogue.turns[expected - 1].transcript
            heard = stored.get("reply_transcript_only") or (audio and (unit_dir / audio).is_file())
            if stored.get("user_text") != said or not heard:
                break
            kept.append(stored)
        return kept

    # -- score --------------------------------------------------------------------------------

    def default_metrics(self, ctx: RunContext) -> list[str]:
        return list(DEFAULT_METRICS)

    def build_resources(self, ctx: RunContext) -> DialogueScoringResources:
        opts = scoring_options(ctx)
        attempts, repeats = opts.judge_attempts, opts.judge_repeats

        def judge() -> Judge:
            return counted_judge(configured_judge(ctx), max_attempts=attempts, repeats=repeats)

        def audio_judge() -> Judge:
            heard = configured_audio_judge(ctx, "rubric mode audio: ")
            return counted_judge(heard, modality="audio", max_attempts=attempts, repeats=repeats)

        def hear(record: DialogueRecord, turns: int) -> Audio:
            if record.unit_dir is None:
                raise VoxevalError(f"dialogue {record.dialogue_id!r}: no unit folder")
            stored = load_dialogue(record.unit_dir)
            tts = ctx.provider("tts", opts.rubric.cue_tts)
            # rendered afresh each time: the stored replies may have changed
            parts = turn_segments(stored, lambda text: tts.synthesize(text), turns=turns)
            return render_segments(record.unit_dir / rubric_audio_wav(turns), parts)

        return DialogueScoringResources(
            judge=judge,
            audio_judge=audio_judge,
            hear=hear,
            rubric_mode=opts.rubric.mode,
            rubric_protocol=opts.rubric.protocol,
        )

    def stored_fault(self, unit: WorkUnit, ctx: RunContext) -> JSONObject | None:
        fault = atomic_files.read_json(ctx.store.folder.unit_dir(unit) / FAULT_JSON)
        return fault if isinstance(fault, dict) else None

    def stored_unit(self, unit: WorkUnit, ctx: RunContext) -> StoredUnit[DialogueRecord]:
        fault = self.stored_fault(unit, ctx)
        return StoredUnit(
            record=lambda: self.record(unit, ctx),
            fault_cause=None if fault is None else str(fault.get("cause") or "exception"),
        )

    def judge_parse_failures(self, scores: Mapping[str, Score]) -> int:
        """Every rubric judgement's unparsable answers."""
        return sum(int(s.details.get("parse_failures") or 0) for s in scores.values())

    def record(self, unit: WorkUnit, ctx: RunContext) -> DialogueRecord:
        """The stored dialogue of ``unit`` as a record for the metrics. A reply without a text
        channel is transcribed (the config's ``asr``, default Whisper tiny.en)."""
        dialogue = self._dialogue(ctx, unit)
        unit_dir = ctx.store.folder.unit_dir(unit)
        stored = atomic_files.read_json(unit_dir / DIALOGUE_JSON)
        if not isinstance(stored, dict) or not isinstance(stored.get("turns"), list):
            raise VoxevalError(f"{unit_dir / DIALOGUE_JSON}: no stored dialogue; run the unit")
        turns = []
        for row in stored["turns"]:
            text = row.get("reply_text")
            if text is None and row.get("reply_audio"):
                text = self._transcribe(ctx, read_audio(unit_dir / row["reply_audio"]))
            turns.append(
                DialogueTurn(index=int(row["index"]), reply_text=text, user_text=row["user_text"])
            )
        return DialogueRecord(
            turns=tuple(turns),
            dialogue_id=dialogue.id,
            dimension=dialogue.dimension,
            tier1=dialogue.capability.tier1 if dialogue.capability else None,
            criteria=tuple(RubricCriterion(c.id, c.level, c.text) for c in dialogue.rubrics.used()),
            unit_dir=unit_dir,
            prompts={
                str(k): str(v)
                for k, v in dict(dialogue.metadata.get("reference_prompts") or {}).items()
                if isinstance(v, str)
            },
        )

    @staticmethod
    def _transcribe(ctx: RunContext, audio: Audio) -> str:
        asr = ctx.provider("asr", ctx.config.asr or DEFAULT_REPLY_ASR)
        return asr.transcribe(audio, language="en").text

    def reference_prompts(self, ctx: RunContext, item_id: str) -> dict[str, str]:
        """The dialogue's own MTalk-Bench judge prompts (``metadata.reference_prompts``)."""
        dialogue = self.suite(ctx).by_id().get(item_id)
        if dialogue is None:
            return {}
        prompts = dialogue.metadata.get("reference_prompts") or {}
        if not isinstance(prompts, dict):
            return {}
        return {str(k): v for k, v in prompts.items() if isinstance(v, str)}

    # -- compare (across systems: the arena, protocols/arena/multi_turn_arena.py) ------------

    def default_comparisons(self, config: RunConfig) -> list[str]:
        """The arena when there are two systems or more to compare and the judge its mode
        needs is configured (without one, an offline run is complete without the arena;
        ``comparisons: [arena]`` asks for it anyway and leaves it not run)."""
        if len(config.systems) < 2:
            return []
        try:
            mode = arena.arena_options(config).mode
        except ConfigError:
            return [arena.ARENA]  # the plan check reports the bad option
        judge = config.audio_judge if mode == "audio" else config.judge
        return [arena.ARENA] if judge is not None else []

    def check_comparisons(self, config: RunConfig, steps: Sequence[str]) -> list[str]:
        return arena.check_arena(config, steps)

    def comparisons(
        self, ctx: RunContext, steps: Sequence[str], units: Sequence[WorkUnit]
    ) -> list[Comparison]:
        if arena.ARENA not in steps:
            return []
        return arena.arena_comparisons(ctx, units)

    def compare(self, comparison: Comparison, ctx: RunContext) -> ComparisonResult:
        if comparison.step != arena.ARENA:
            raise VoxevalError(f"multi_turn has no comparison step {comparison.step!r}")
        return arena.compare_arena(comparison, ctx)

    def summarize_comparisons(self, ctx: RunContext) -> dict[str, JSONObject]:
        records = ctx.store.comparisons.records(arena.ARENA)
        if not records:
            return {}
        summary = arena.summarize_arena(ctx)
        try:
            dialogues = self.suite(ctx).by_id()
        except VoxevalError:
            dialogues = {}
        compared = sorted({str(r.result.get("dialogue")) for r in records if r.status == "done"})
        heard: JudgedFrom = "audio" if summary.get("mode") == "audio" else "transcript"
        warnings = cue_warnings([dialogues[d] for d in compared if d in dialogues], heard)
        if warnings:
            summary["warnings"] = list(warnings)
        return {arena.ARENA: summary}

    # -- summarize ----------------------------------------------------------------------------

    def summarize(self, ctx: RunContext) -> dict[str, JSONObject]:
        try:
            dialogues = self.suite(ctx).by_id()
        except VoxevalError:
            dialogues = {}  # the suite is gone: no capability breakdown, no turn counts
        metrics = list(ctx.config.metrics or DEFAULT_METRICS)
        heard: JudgedFrom = "audio" if scoring_options(ctx).rubric.mode == "audio" else "transcript"
        return summarize_multi_turn(ctx, metrics, dialogues, heard)
