"""Read the MTalk-Bench model-outputs file (the ``sample.json`` layout), unmodified.

The top level has the keys ``"Semantic information"``, ``"Paralinguistic information"`` and
``"Ambient sound"`` (no others); each holds a list of dialogues, a dialogue is a list of turns
(turn number = position, from 1) and a turn is::

    {"question": "./audio/scene1/record_1-1/1-1-turn1_sem.wav",
     "dialogue": {"<model>": "<reply audio path>", ...},
     "question_transcription": "...",
     "dialogue_transcription": {"<model>": "<reply text>", ...}}

The dialogue number is only in the question path (``record_(\\d+-\\d+)``); the dialogue id is
the dimension code and that number (``sem-1-1``). Its first part is the scene, which names the
scenario (scenes 1..9 in the paper's order). Paths are looked up under the given audio roots,
then the file's folder and the folder above it (``mtalk_audio_search``: also by file name in a
root's ``static/audio/``, where the public repository keeps its question recordings). A
recording found nowhere is not an error: that turn or reply loads transcript-only (its
transcription is what a judge reads), and the import counts and lists those parts. A reply
with neither audio nor transcription, or an empty or over-long recording, is a problem naming
the file: a bad question recording drops its dialogue, a bad reply drops that model's reply to
that turn (its replay then fails on that turn, visibly).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from voxeval.audio import AudioLimits, probe_audio
from voxeval.benchmarks.mtalk.dialogue import Dialogue, turn_item_id
from voxeval.benchmarks.mtalk.mtalk_audio_search import AudioSearch, paths_in
from voxeval.benchmarks.mtalk.mtalk_import import MTalkImport, Progress, ReleasedReply
from voxeval.benchmarks.mtalk.mtalk_taxonomy import (
    CODE_OF_DIMENSION,
    OUTPUT_FILE_KEYS,
    Dimension,
    scenario_of_scene,
)
from voxeval.errors import AudioError, ConfigError
from voxeval.json_types import JSONObject, JSONValue

RECORD_ID = re.compile(r"record_(\d+-\d+)")


def record_number(question_path: str) -> str | None:
    """``3-2`` for ``.../record_3-2/3-2-turn1_sem.wav``; None when the path names no record."""
    match = RECORD_ID.search(question_path)
    return match.group(1) if match else None


def read_model_outputs_file(path: Path) -> JSONObject:
    """The top-level mapping; errors name the file and the keys it should have."""
    if not path.is_file():
        raise ConfigError(f"{path}: model-outputs file not found")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid JSON ({exc})") from exc
    expected = ", ".join(repr(k) for k in OUTPUT_FILE_KEYS)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping with the keys {expected}")
    unknown = [k for k in data if k not in OUTPUT_FILE_KEYS]
    if unknown:
        raise ConfigError(
            f"{path}: unknown top-level key(s) {', '.join(map(repr, unknown))} "
            f"(the model-outputs layout has exactly {expected})"
        )
    if not data:
        raise ConfigError(f"{path}: empty; expected the keys {expected}")
    return data


def is_model_outputs_file(path: Path) -> bool:
    """Whether ``path`` is a JSON file whose top level uses the model-outputs keys."""
    if path.suffix.lower() != ".json" or not path.is_file():
        return False
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False
    return isinstance(data, dict) and any(k in OUTPUT_FILE_KEYS for k in data)


class _Turns:
    """Reads one dialogue's turns, recording problems in the import."""

    def __init__(self, result: MTalkImport, file: Path, search: AudioSearch, where: str) -> None:
        self.result = result
        self.file = file
        self.search = search
        self.where = where
        self.user_ok = True

    def problem(self, where: str, field_name: str, message: str, *, user: bool) -> None:
        self.result.problem(self.file, where, field_name, message)
        self.user_ok = self.user_ok and not user

    def audio(
        self, value: JSONValue, where: str, field_name: str, *, user: bool
    ) -> tuple[str | None, bool]:
        """(the recording's absolute path, or None; whether it is absent). An absent file is
        not a problem (the part loads transcript-only); a malformed path or a bad file is."""
        if not isinstance(value, str) or not value.strip():
            self.problem(where, field_name, "expected an audio path", user=user)
            return None, False
        target = self.search.find(value)
        if target is None:
            return None, True
        try:
            if target.stat().st_size == 0:
                raise AudioError(f"{target}: empty file")
            probe_audio(target, AudioLimits())
        except AudioError as exc:
            self.problem(where, field_name, str(exc), user=user)
            return None, False
        return str(target), False


def _read_dialogue(
    raw: JSONValue,
    dimension: Dimension,
    where: str,
    file: Path,
    search: AudioSearch,
    result: MTalkImport,
) -> tuple[Dialogue, dict[str, list[ReleasedReply]]] | None:
    if not isinstance(raw, list) or not raw:
        result.problem(file, where, "<dialogue>", "expected a non-empty list of turns")
        return None
    reader = _Turns(result, file, search, where)
    numbers: set[str] = set()
    turns: list[dict[str, Any]] = []
    replies: dict[str, list[tuple[int, str | None, str | None]]] = {}
    absent: list[tuple[str, str]] = []  # (part, path) of the recordings found nowhere
    for position, turn in enumerate(raw, 1):
        at = f"{where} turn {position}"
        if not isinstance(turn, dict):
            reader.problem(
                at, "<turn>", f"expected a mapping, got {type(turn).__name__}", user=True
            )
            continue
        question = turn.get("question")
        number = record_number(question) if isinstance(question, str) else None
        if number is None:
            reader.problem(at, "question", f"no record_N-M in {question!r}", user=True)
        else:
            numbers.add(number)
        audio, missing = reader.audio(question, at, "question", user=True)
        transcript = turn.get("question_transcription")
        if not isinstance(transcript, str) or not transcript.strip():
            reader.problem(at, "question_transcription", "missing or empty", user=True)
        elif audio is not None or missing:
            turns.append({"transcript": transcript.strip(), "audio": audio})
            if missing:
                absent.append((f"turn {position} question", str(question)))
        answers = turn.get("dialogue", {})
        texts = turn.get("dialogue_transcription", {})
        if not isinstance(answers, dict):
            reader.problem(at, "dialogue", "expected {model: audio path}", user=False)
            answers = {}
        if not isinstance(texts, dict):
            reader.problem(at, "dialogue_transcription", "expected {model: text}", user=False)
            texts = {}
        for model, path in answers.items():
            reply_audio, missing = reader.audio(path, at, f"dialogue.{model}", user=False)
            text = texts.get(model)
            text = text.strip() if isinstance(text, str) and text.strip() else None
            if missing and text is None:
                reader.problem(
                    at,
                    f"dialogue.{model}",
                    f"audio file not found ({path}) and no dialogue_transcription: "
                    "nothing to replay",
                    user=False,
                )
                continue
            if reply_audio is None and not missing:
                continue
            if missing:
                absent.append((f"turn {position} dialogue.{model}", str(path)))
            replies.setdefault(str(model), []).append((position, reply_audio, text))
    if len(numbers) > 1:
        reader.problem(
            where, "question", f"turns name different records {sorted(numbers)}", user=True
        )
    if not reader.user_ok or not numbers:
        return None
    number = numbers.pop()
    scene = int(number.split("-")[0])
    fields = {
        "id": f"{CODE_OF_DIMENSION[dimension]}-{number}",
        "dimension": dimension,
        "scenario": scenario_of_scene(scene),
        "turns": turns,
        "metadata": {"number": number, "scene": scene, "layout": "model-outputs"},
    }
    try:
        dialogue = Dialogue.model_validate(fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        result.problem(file, where, ".".join(map(str, err["loc"])) or "<dialogue>", err["msg"])
        return None
    released = {
        model: [ReleasedReply(turn_item_id(dialogue.id, n), a, t) for n, a, t in rows]
        for model, rows in replies.items()
    }
    for part, path in absent:
        result.absent_audio.append(f"{dialogue.id} {part}: {path}")
    return dialogue, released


def import_model_outputs(
    path: str | Path,
    progress: Progress | None = None,
    audio_root: str | Path | Sequence[str | Path] | None = None,
) -> MTalkImport:
    """Every readable dialogue and reply of a model-outputs file, and the problems found.

    Audio paths are searched under ``audio_root`` (one folder or several, in order), then
    the file's folder and the folder above it (the reference scripts resolve them from the
    repository root, one level above ``data/``); see ``mtalk_audio_search``. Recordings found
    nowhere load transcript-only and are counted (``MTalkImport.absent_audio``).
    Raises ``ConfigError`` when the file itself cannot be read or no dialogue loads."""
    file = Path(path).resolve()
    given = (
        []
        if audio_root is None
        else [audio_root]
        if isinstance(audio_root, str | Path)
        else list(audio_root)
    )
    roots = [Path(r).resolve() for r in given]
    for root in roots:
        if not root.is_dir():
            raise ConfigError(f"{root}: audio root folder not found")
    data = read_model_outputs_file(file)
    search = AudioSearch([*roots, file.parent, file.parent.parent], paths_in(data))
    result = MTalkImport(source=str(file), layout="model-outputs")
    work: list[tuple[str, int, JSONValue]] = []
    for key, value in data.items():
        if not isinstance(value, list):
            result.problem(file, repr(key), key, "expected a list of dialogues")
            continue
        work += [(key, index, raw) for index, raw in enumerate(value)]
    seen: dict[str, str] = {}
    for done, (key, index, raw) in enumerate(work, 1):
        where = f"{key!r}[{index}]"
        read = _read_dialogue(raw, OUTPUT_FILE_KEYS[key], where, file, search, result)
        if progress is not None:
            progress(done, len(work))
        if read is None:
            continue
        dialogue, released = read
        if dialogue.id in seen:
            result.problem(
                file, where, "question", f"dialogue {dialogue.id} also at {seen[dialogue.id]}"
            )
            continue
        seen[dialogue.id] = where
        result.dialogues.append(dialogue)
        for model, rows in released.items():
            result.replies.setdefault(model, []).extend(rows)
    if not result.dialogues:
        raise ConfigError(f"{file}: no dialogue could be read\n{result.summary()}")
    return result


def load_model_outputs(path: str | Path) -> MTalkImport:
    """A model-outputs file that must read completely: any problem is a ``ConfigError``
    listing them all."""
    result = import_model_outputs(path)
    if result.problems:
        raise ConfigError(result.summary())
    return result
