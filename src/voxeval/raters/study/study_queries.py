"""Study items from a single-turn run: a reply scored 1-10 against its query's checklist
(``score``), the same reply with each checklist entry as a criterion to tick (``rubric``),
and the query texts a speaker records (``record``).

A unit's folder holds the query audio the system heard (``user.wav``) and its spoken reply
(``assistant.wav``, absent when the system failed: the page then plays the "no spoken
response" cue, so a failure is scored as one). ``--limit N`` keeps the first N queries."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voxeval.benchmarks.build_manifest import RenderedQuery
from voxeval.benchmarks.wildspeech.spoken_query import CATEGORY_NAMES
from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject
from voxeval.protocols.single_turn import ASSISTANT_WAV, REPLY_JSON, USER_WAV
from voxeval.raters.run_source import RunSource
from voxeval.raters.study.study_audio import StudyAudio
from voxeval.raters.study.study_clips import no_reply_clip
from voxeval.raters.study.study_files import Criterion, Stimulus, StudyItem
from voxeval.store.records import UnitRecord


@dataclass
class QuerySource:
    run: RunSource
    audio: StudyAudio
    categories: tuple[str, ...] = ()
    limit: int | None = None

    def rendered(self) -> dict[str, RenderedQuery]:
        return self.run.ctx.protocol.items(self.run.ctx, build=False)  # type: ignore[union-attr]

    def units(self) -> list[tuple[UnitRecord, RenderedQuery]]:
        """Done units whose query is kept (category filter, first ``limit`` queries)."""
        rendered = self.rendered()
        kept: list[str] = []
        out = []
        for unit in self.run.units:
            item = rendered.get(unit.item_id)
            if item is None:
                raise ConfigError(
                    f"{self.run.unit_dir(unit) / REPLY_JSON}: field 'item_id': "
                    f"{unit.item_id!r} is not in the run's rendered suite"
                )
            if self.categories and item.query.category not in self.categories:
                continue
            if item.query.id not in kept:
                if self.limit is not None and len(kept) >= self.limit:
                    continue
                kept.append(item.query.id)
            out.append((unit, item))
        return out

    def stimuli(self, item_id: str, unit: UnitRecord) -> tuple[list[Stimulus], bool]:
        folder = self.run.unit_dir(unit)
        query_path, query_s = self.audio.copy(
            folder / USER_WAV, item_id, "query", f"{folder}: file {USER_WAV}"
        )
        reply = folder / ASSISTANT_WAV
        if reply.is_file():
            where = f"{folder}: file {ASSISTANT_WAV}"
            reply_path, reply_s = self.audio.copy(reply, item_id, "reply", where)
        else:
            reply_path, reply_s = self.audio.write(no_reply_clip(), item_id, "reply")
        return [
            Stimulus(id="query", role="query", path=query_path, duration_s=query_s),
            Stimulus(id="reply", role="reply", path=reply_path, duration_s=reply_s),
        ], not reply.is_file()

    def source(self, unit: UnitRecord, item: RenderedQuery, missing: bool) -> JSONObject:
        out: dict[str, Any] = {
            "run": str(self.run.run_dir.resolve()),
            "run_id": self.run.run_id,
            "protocol": "single_turn",
            "item": unit.item_id,
            "query_id": item.query.id,
            "condition": unit.condition,
            "system": unit.system,
            "trial": 0,
        }
        if unit.system_fault:
            out["system_fault"] = unit.system_fault
        if missing:
            out["missing_reply"] = True
        return out


def _title(item: RenderedQuery) -> str:
    category = CATEGORY_NAMES.get(item.query.category, item.query.category)
    return f"A spoken question ({category}) and an assistant's spoken reply"


def score_items(source: QuerySource) -> Iterator[StudyItem]:
    for unit, item in source.units():
        item_id = f"score:{unit.item_id}:{unit.system}"
        stimuli, missing = source.stimuli(item_id, unit)
        yield StudyItem(
            item_id=item_id,
            title=_title(item),
            context="Score the reply from 1 (useless) to 10 (excellent); a good reply covers "
            "the points listed.",
            dimension=item.query.category,
            stimuli=stimuli,
            systems={"reply": unit.system},
            checklist=list(item.query.checklist),
            source=source.source(unit, item, missing),
        )


def rubric_items(source: QuerySource) -> Iterator[StudyItem]:
    """The checklist entries as criteria (``c1``, ``c2``...): the points the LLM judge grades
    the reply against. A query without a checklist has nothing to tick and is left out."""
    for unit, item in source.units():
        if not item.query.checklist:
            continue
        item_id = f"rubric:{unit.item_id}:{unit.system}"
        stimuli, missing = source.stimuli(item_id, unit)
        yield StudyItem(
            item_id=item_id,
            title=_title(item),
            context="Tick every point the reply covers.",
            dimension=item.query.category,
            stimuli=stimuli,
            systems={"reply": unit.system},
            criteria=[
                Criterion(id=f"c{n}", text=text) for n, text in enumerate(item.query.checklist, 1)
            ],
            source=source.source(unit, item, missing),
        )


def record_items(source: QuerySource) -> Iterator[StudyItem]:
    """One item per query of the suite (not per rendering): its text, and its recording (or
    its first clean rendering) as the example."""
    suite_path = str(source.run.ctx.suite.path) if source.run.ctx.suite else ""
    seen: dict[str, RenderedQuery] = {}
    for item in source.rendered().values():
        if source.categories and item.query.category not in source.categories:
            continue
        if item.query.id not in seen or (
            seen[item.query.id].condition != "clean" and item.condition == "clean"
        ):
            seen[item.query.id] = item
    chosen = list(seen.values())
    for item in chosen[: source.limit] if source.limit is not None else chosen:
        query = item.query
        item_id = f"record:{query.id}"
        example = Path(query.audio) if query.audio else item.audio_path
        where = f"{suite_path}: item {query.id!r}: field audio"
        relative, seconds = source.audio.copy(example, item_id, "example", where)
        yield StudyItem(
            item_id=item_id,
            title="Record this spoken question",
            dimension=query.category,
            stimuli=[
                Stimulus(
                    id="example", role="example", path=relative, duration_s=seconds, text=query.text
                )
            ],
            prompt_text=query.text,
            source={
                "suite": suite_path,
                "protocol": "single_turn",
                "query_id": query.id,
                "run": str(source.run.run_dir.resolve()),
            },
        )
