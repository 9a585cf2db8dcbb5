"""Read the MTalk-Bench dataset layout (one row per turn) from a local file or folder.

Columns: ``type`` (``sem``/``para``/``amb``), ``number`` (the dialogue, e.g. ``1-1``; its
first part is the scene, i.e. the scenario), ``turn`` (``turn1``..``turn3``), ``source``
(``question`` for the user's turn, else the name of the model whose reply the row holds),
``audio`` (24 kHz; a path relative to the data file, a ``{"bytes", "path"}`` mapping as
parquet stores it, or ``{"array", "sampling_rate"}``), ``transcription``, ``arena_prompt``,
``rubric_prompt_general`` and ``rubric_prompt_specific`` (the judge prompts of a question row;
the rubric criteria are read out of those of the first question row that has them, as the
reference does; see ``mtalk_criteria``).

Files are ``.parquet`` (read with pyarrow), ``.jsonl`` or ``.json``; nothing is downloaded.
Embedded audio is written under ``audio_dir`` as files named by their content. Question rows
become the user turns of dialogue ``<type>-<number>``; model rows become that model's released
replies. A row that cannot be read is a problem naming the file, the row and the field.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from voxeval.audio import AudioLimits, probe_audio
from voxeval.benchmarks.dataset_files import RowValue, data_files, read_data_file
from voxeval.benchmarks.embedded_audio import EmbeddedAudioWriter, RowError
from voxeval.benchmarks.mtalk.dialogue import Dialogue, turn_item_id
from voxeval.benchmarks.mtalk.mtalk_criteria import criteria_by_level, parse_criteria
from voxeval.benchmarks.mtalk.mtalk_import import MTalkImport, Progress, ReleasedReply
from voxeval.benchmarks.mtalk.mtalk_taxonomy import (
    DIMENSION_CODES,
    DIMENSIONS,
    Dimension,
    scenario_of_scene,
)
from voxeval.errors import AudioError, ConfigError

QUESTION_SOURCE = "question"
PROMPT_FIELDS = ("rubric_prompt_general", "rubric_prompt_specific")
_NUMBER = re.compile(r"^\d+-\d+$")
_TURN = re.compile(r"^(?:turn)?\s*([1-9][0-9]*)$", re.IGNORECASE)


def default_audio_dir() -> Path:
    root = Path(os.environ.get("VOXEVAL_CACHE_DIR", Path.home() / ".cache" / "voxeval"))
    return root / "mtalk" / "audio"


@dataclass(frozen=True)
class _Row:
    file: Path
    number: int  # 1-based

    @property
    def where(self) -> str:
        return f"row {self.number}"


@dataclass
class _Question:
    row: _Row
    transcript: str
    audio: str
    prompts: dict[str, str]


@dataclass
class _Group:
    """The rows of one dialogue."""

    dimension: Dimension
    number: str
    questions: dict[int, _Question] = field(default_factory=dict)
    replies: dict[str, dict[int, tuple[_Row, str, str | None]]] = field(default_factory=dict)


def _text(row: dict[str, RowValue], key: str) -> str:
    value = row.get(key)
    return value.strip() if isinstance(value, str) else ""


def _dimension(value: RowValue) -> Dimension:
    text = str(value or "").strip().lower()
    if text in DIMENSION_CODES:
        return DIMENSION_CODES[text]
    for name in DIMENSIONS:
        if text == name:
            return name
    raise RowError("type", f"expected sem, para or amb, got {value!r}")


def _turn(value: RowValue) -> int:
    match = _TURN.match(str(value if value is not None else "").strip())
    if match is None:
        raise RowError("turn", f"expected turn1, turn2, ..., got {value!r}")
    return int(match.group(1))


class _Reader:
    def __init__(self, result: MTalkImport, writer: EmbeddedAudioWriter) -> None:
        self.result = result
        self.writer = writer
        self.groups: dict[tuple[Dimension, str], _Group] = {}

    def add(self, row: _Row, data: RowValue) -> None:
        if not isinstance(data, dict):
            raise RowError("<row>", f"expected a mapping, got {type(data).__name__}")
        dimension = _dimension(data.get("type"))
        number = str(data.get("number") or "").strip()
        if not _NUMBER.match(number):
            raise RowError("number", f"expected N-M (e.g. 1-1), got {data.get('number')!r}")
        turn = _turn(data.get("turn"))
        source = _text(data, "source")
        if not source:
            raise RowError("source", "missing or empty")
        transcript = _text(data, "transcription")
        if source == QUESTION_SOURCE and not transcript:
            raise RowError("transcription", "the user's words are missing")
        group = self.groups.setdefault((dimension, number), _Group(dimension, number))
        if source == QUESTION_SOURCE:
            if turn in group.questions:
                first = group.questions[turn].row
                raise RowError("turn", f"turn{turn} of {number} already read at {first.where}")
            audio = self._audio(data.get("audio"), row.file.parent)
            prompts = {k: _text(data, k) for k in ("arena_prompt", *PROMPT_FIELDS)}
            group.questions[turn] = _Question(row, transcript, audio, prompts)
            return
        replies = group.replies.setdefault(source, {})
        if turn in replies:
            raise RowError("turn", f"{source} turn{turn} of {number} already read")
        audio = self._audio(data.get("audio"), row.file.parent)
        replies[turn] = (row, audio, transcript or None)

    def _audio(self, value: RowValue, base: Path) -> str:
        """The row's recording as a checked file (size and header within the limits)."""
        path = Path(self.writer.materialise(value, base))
        try:
            if path.stat().st_size == 0:
                raise AudioError(f"{path}: empty file")
            probe_audio(path, AudioLimits())
        except AudioError as exc:
            raise RowError("audio", str(exc)) from exc
        return str(path)

    def dialogue(self, group: _Group) -> Dialogue | None:
        code = next(k for k, v in DIMENSION_CODES.items() if v == group.dimension)
        ident = f"{code}-{group.number}"
        if not group.questions:
            # only model rows were read (the question rows, if any, are reported already)
            rows = [row for replies in group.replies.values() for row, _, _ in replies.values()]
            if rows:
                self.problem(rows[0], "source", f"{ident}: model replies but no question row")
            return None
        turns = sorted(group.questions)
        first = group.questions[turns[0]].row
        if turns != list(range(1, len(turns) + 1)):
            have = ", ".join(f"turn{t}" for t in turns)
            self.problem(first, "turn", f"{ident}: user turns are not 1..n ({have})")
            return None
        # As the reference does, the rubric prompts of the first question row that has them
        # serve the whole dialogue (later rows usually repeat them).
        graded = next(
            (
                group.questions[t]
                for t in turns
                if any(group.questions[t].prompts[k] for k in PROMPT_FIELDS)
            ),
            None,
        )
        parsed = parse_criteria([(k, graded.prompts[k]) for k in PROMPT_FIELDS] if graded else [])
        for field_name, message in parsed.problems:
            assert graded is not None  # no prompts, no problems
            self.problem(graded.row, field_name, f"{ident}: {message}")
        prompts = dict(graded.prompts) if graded else {}
        if not prompts.get("arena_prompt"):
            arena = [group.questions[t].prompts["arena_prompt"] for t in turns]
            prompts["arena_prompt"] = next((a for a in arena if a), "")
        scene = int(group.number.split("-")[0])
        fields = {
            "id": ident,
            "dimension": group.dimension,
            "scenario": scenario_of_scene(scene),
            "turns": [
                {"transcript": group.questions[t].transcript, "audio": group.questions[t].audio}
                for t in turns
            ],
            "rubrics": criteria_by_level(parsed),
            "metadata": {
                "number": group.number,
                "scene": scene,
                "layout": "dataset",
                "reference_prompts": {k: v for k, v in prompts.items() if v},
            },
        }
        try:
            return Dialogue.model_validate(fields)
        except ValidationError as exc:
            err = exc.errors()[0]
            self.problem(first, ".".join(map(str, err["loc"])) or "<row>", err["msg"])
            return None

    def problem(self, row: _Row, field_name: str, message: str) -> None:
        self.result.problem(row.file, row.where, field_name, message)


def import_mtalk_dataset(
    data: str | Path, audio_dir: str | Path | None = None, progress: Progress | None = None
) -> MTalkImport:
    """Every readable dialogue and released reply of a dataset-layout file or folder.

    Raises ``ConfigError`` when a file cannot be read or no dialogue loads; audio files the
    failed import wrote are removed."""
    path = Path(data).resolve()
    if not path.exists():
        raise ConfigError(f"{path}: MTalk-Bench data not found")
    writer = EmbeddedAudioWriter(Path(audio_dir) if audio_dir else default_audio_dir())
    result = MTalkImport(source=str(path), layout="dataset")
    reader = _Reader(result, writer)
    try:
        rows = [
            (_Row(f, number), raw)
            for f in data_files(path)
            for number, raw in enumerate(read_data_file(f), 1)
        ]
        for done, (row, raw) in enumerate(rows, 1):
            try:
                reader.add(row, raw)
            except RowError as exc:
                result.problem(row.file, row.where, exc.field, str(exc))
            if progress is not None:
                progress(done, len(rows))
        for group in reader.groups.values():
            dialogue = reader.dialogue(group)
            if dialogue is None:
                continue
            result.dialogues.append(dialogue)
            for model, replies in sorted(group.replies.items()):
                for turn, (row, audio, text) in sorted(replies.items()):
                    if turn > len(dialogue.turns):
                        reader.problem(row, "turn", f"{dialogue.id}: no user turn{turn}")
                        continue
                    reply = ReleasedReply(turn_item_id(dialogue.id, turn), audio, text)
                    result.replies.setdefault(model, []).append(reply)
        if not result.dialogues:
            raise ConfigError(f"{path}: no dialogue could be read\n{result.summary()}")
        result.written = [str(p) for p in writer.created]
    except BaseException:
        writer.discard()
        raise
    return result


def load_mtalk_dataset(data: str | Path, audio_dir: str | Path | None = None) -> MTalkImport:
    """A dataset that must read completely: any problem is a ``ConfigError`` listing them."""
    result = import_mtalk_dataset(data, audio_dir)
    if result.problems:
        raise ConfigError(result.summary())
    return result
