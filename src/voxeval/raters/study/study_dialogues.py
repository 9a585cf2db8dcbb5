"""Study items from a multi-turn run: arena pairs, rubric dialogues and the user turns a
speaker records.

Arena: one item per (dialogue, unordered pair of systems) with both systems' stored dialogue
done; the stimuli are, per turn n, the user's audio ``u<n>`` and the two replies ``a<n>`` and
``b<n>`` (``a`` is the pair's first system by name; the app swaps sides per rater). A turn a
system did not answer (its fault ended the dialogue) plays the "no spoken response" cue, so
the failure is judged, not dropped.

Rubric: one item per (dialogue, system) with the dialogue's accepted criteria, the ones the
LLM judge grades."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from voxeval.benchmarks.mtalk.dialogue import Dialogue, strip_tags, transcript_tags
from voxeval.benchmarks.mtalk.mtalk_taxonomy import TAXONOMY
from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject
from voxeval.protocols.arena.inputs import DIALOGUE_FILE, StoredDialogue, load_dialogue
from voxeval.protocols.arena.judgements import item_of
from voxeval.raters.run_source import RunSource
from voxeval.raters.study.study_audio import StudyAudio
from voxeval.raters.study.study_clips import no_reply_clip
from voxeval.raters.study.study_files import Criterion, Stimulus, StudyItem
from voxeval.store.records import UnitRecord


def capability_title(dialogue: Dialogue) -> str:
    """The dialogue's dimension and capability in words (the paper's labels)."""
    parts = [f"{dialogue.dimension.capitalize()} dimension"]
    capability = dialogue.capability
    if capability is not None:
        label, tier2 = TAXONOMY[dialogue.dimension].get(capability.tier1, (capability.tier1, {}))
        text = label
        if capability.tier2:
            text += f" / {tier2.get(capability.tier2, capability.tier2)}"
        parts.append(f"capability: {text}")
    return "; ".join(parts)


@dataclass
class DialogueSource:
    """The run's dialogues, the stored dialogue of each done unit, and cached cue clips."""

    run: RunSource
    audio: StudyAudio
    dimensions: tuple[str, ...] = ()
    limit: int | None = None
    stored: dict[tuple[str, str], StoredDialogue] = field(default_factory=dict)
    faults: dict[tuple[str, str], str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for unit in self.run.units:
            self.stored[(unit.item_id, unit.system)] = self._load(unit)
            if unit.system_fault:
                self.faults[(unit.item_id, unit.system)] = unit.system_fault

    def _load(self, unit: UnitRecord) -> StoredDialogue:
        return load_dialogue(self.run.unit_dir(unit))

    def dialogues(self) -> list[Dialogue]:
        suite = self.run.ctx.protocol.suite(self.run.ctx)  # type: ignore[union-attr]
        chosen = [
            d for d in suite.dialogues if not self.dimensions or d.dimension in self.dimensions
        ]
        return chosen[: self.limit] if self.limit is not None else chosen

    def where(self, dialogue: str, system: str) -> str:
        unit = next(u for u in self.run.units if (u.item_id, u.system) == (dialogue, system))
        return str(self.run.unit_dir(unit) / DIALOGUE_FILE)

    def user_stimulus(self, item_id: str, dialogue: Dialogue, turn: int) -> Stimulus:
        path = dialogue.turns[turn - 1].audio
        where = f"{self.run.ctx.suite.path if self.run.ctx.suite else 'suite'}: dialogue "
        where += f"{dialogue.id!r}: field turns.{turn}.audio"
        if path is None:
            raise ConfigError(f"{where}: the user turn has no recording (render the suite)")
        relative, seconds = self.audio.copy(Path(path), item_id, f"u{turn}", where)
        return Stimulus(id=f"u{turn}", role="user", turn=turn, path=relative, duration_s=seconds)

    def reply_stimulus(
        self, item_id: str, dialogue: str, system: str, turn: int, stimulus_id: str, role: Any
    ) -> tuple[Stimulus, bool]:
        """The reply of ``system`` to user turn ``turn``; the bool says it was missing."""
        stored = self.stored[(dialogue, system)]
        found = next((t for t in stored.turns if t.index == turn), None)
        if found is None or found.reply_audio is None:
            relative, seconds = self.audio.write(no_reply_clip(), item_id, stimulus_id)
            missing = True
        else:
            where = f"{self.where(dialogue, system)}: field turns[{turn - 1}].reply_audio"
            relative, seconds = self.audio.copy(found.reply_audio, item_id, stimulus_id, where)
            missing = False
        stimulus = Stimulus(id=stimulus_id, role=role, turn=turn, path=relative, duration_s=seconds)
        return stimulus, missing

    def source(self, dialogue: str, systems: list[str]) -> JSONObject:
        faults = {s: self.faults[(dialogue, s)] for s in systems if (dialogue, s) in self.faults}
        out: dict[str, Any] = {
            "run": str(self.run.run_dir.resolve()),
            "run_id": self.run.run_id,
            "protocol": "multi_turn",
            "dialogue": dialogue,
            "trial": 0,
            "item": item_of(dialogue, 0),
        }
        if faults:
            out["system_faults"] = faults
        return out


def arena_items(source: DialogueSource, systems: list[str]) -> Iterator[StudyItem]:
    if len(systems) < 2:
        raise ConfigError(f"arena: needs two systems or more, the study has {systems}")
    for dialogue in source.dialogues():
        done = [s for s in systems if (dialogue.id, s) in source.stored]
        for first, second in combinations(sorted(done), 2):
            item_id = f"arena:{dialogue.id}:{first}~{second}"
            stimuli: list[Stimulus] = []
            missing: dict[str, list[int]] = {}
            for turn in range(1, len(dialogue.turns) + 1):
                stimuli.append(source.user_stimulus(item_id, dialogue, turn))
                for side, system in (("a", first), ("b", second)):
                    stimulus, absent = source.reply_stimulus(
                        item_id, dialogue.id, system, turn, f"{side}{turn}", side
                    )
                    stimuli.append(stimulus)
                    if absent:
                        missing.setdefault(side, []).append(turn)
            extra = {"missing_replies": missing} if missing else {}
            yield StudyItem(
                item_id=item_id,
                title=capability_title(dialogue),
                context="Listen to the user and to both assistants, turn by turn; which "
                "assistant handled the conversation better?",
                dimension=dialogue.dimension,
                stimuli=stimuli,
                systems={"a": first, "b": second},
                source={**source.source(dialogue.id, [first, second]), **extra},
            )


def rubric_items(source: DialogueSource, systems: list[str]) -> Iterator[StudyItem]:
    for dialogue in source.dialogues():
        criteria = [Criterion(id=c.id, text=c.text) for c in dialogue.rubrics.used()]
        if not criteria:
            continue  # nothing to tick; the LLM judge had nothing to grade either
        for system in systems:
            if (dialogue.id, system) not in source.stored:
                continue
            item_id = f"rubric:{dialogue.id}:{system}"
            stimuli: list[Stimulus] = []
            for turn in range(1, len(dialogue.turns) + 1):
                stimuli.append(source.user_stimulus(item_id, dialogue, turn))
                reply, _ = source.reply_stimulus(
                    item_id, dialogue.id, system, turn, f"r{turn}", "reply"
                )
                stimuli.append(reply)
            yield StudyItem(
                item_id=item_id,
                title=capability_title(dialogue),
                context="Listen to the whole conversation, then tick every statement that "
                "holds for the assistant's replies.",
                dimension=dialogue.dimension,
                stimuli=stimuli,
                systems={"reply": system},
                criteria=criteria,
                source={**source.source(dialogue.id, [system]), "system": system},
            )


def record_items(source: DialogueSource) -> Iterator[StudyItem]:
    """Each user turn of the suite's dialogues, the words to say and how to say them (the
    annotations), with the suite's own recording as the example when there is one."""
    suite_path = str(source.run.ctx.suite.path) if source.run.ctx.suite else ""
    for dialogue in source.dialogues():
        for turn, user in enumerate(dialogue.turns, 1):
            item_id = f"record:{dialogue.id}:turn{turn}"
            stimuli = []
            if user.audio:
                where = f"{suite_path}: dialogue {dialogue.id!r}: field turns.{turn}.audio"
                relative, seconds = source.audio.copy(Path(user.audio), item_id, "example", where)
                stimuli.append(
                    Stimulus(id="example", role="example", turn=turn, path=relative,
                             duration_s=seconds, text=user.transcript)
                )  # fmt: skip
            cues = transcript_tags(user.transcript)
            yield StudyItem(
                item_id=item_id,
                title=f"Record turn {turn} of a conversation ({dialogue.dimension})",
                context=("Say it this way: " + ", ".join(cues)) if cues else "",
                dimension=dialogue.dimension,
                stimuli=stimuli,
                prompt_text=strip_tags(user.transcript),
                source={
                    "suite": suite_path,
                    "protocol": "multi_turn",
                    "dialogue": dialogue.id,
                    "turn": turn,
                    "run": str(source.run.run_dir.resolve()),
                },
            )
