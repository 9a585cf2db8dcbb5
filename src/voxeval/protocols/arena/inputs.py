"""What the arena judge is shown of one stored dialogue: the unit's ``dialogue.json`` read
back, the annotated transcript, the style features (reply words and seconds) and the spoken
comparison file of the audio mode.

The audio file of one presentation order is: the cue "dialogue with model A", then per turn
the cue "turn N", the user's audio, the cue "model's response" and the reply audio; then the
same for model B. Every segment is separated by one second of silence. Cues are spoken by our
own TTS; a turn without stored user audio has its transcript spoken by the same voice, a
transcript-only reply (a released reply whose recording is absent) its text, and a turn
without any reply audio the cue "no spoken response"."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from voxeval import atomic_files
from voxeval.audio import Audio, concatenate, read_audio, resample, write_audio
from voxeval.errors import VoxevalError
from voxeval.json_types import JSONArray, JSONReadObject, JSONReadValue

DIALOGUE_FILE = "dialogue.json"
SEGMENT_GAP_S = 1.0
COMPARISON_RATE = 16000
NO_REPLY_TEXT = "(no response)"
NO_SPOKEN_REPLY_CUE = "no spoken response"
_TAG = re.compile(r"\[[^\]]*\]|<[^>]*>")


class DialogueFileError(VoxevalError):
    """A unit's ``dialogue.json`` is missing or malformed (the message names file and field)."""


@dataclass(frozen=True)
class StoredTurn:
    index: int
    user_text: str
    user_audio: Path | None
    reply_text: str | None
    reply_audio: Path | None
    reply_duration_s: float | None
    # a released reply whose recording is absent: its text is the reply (spoken, if heard)
    reply_transcript_only: bool = False


@dataclass(frozen=True)
class StoredDialogue:
    dialogue: str
    system: str
    dimension: str
    turns: tuple[StoredTurn, ...]

    @property
    def reply_words(self) -> float:
        """Words of all replies (the ``length`` style feature)."""
        return float(sum(len((t.reply_text or "").split()) for t in self.turns))

    @property
    def reply_seconds(self) -> float:
        """Seconds of all spoken replies (the ``duration`` style feature)."""
        return float(sum(t.reply_duration_s or 0.0 for t in self.turns))

    def features(self) -> dict[str, float]:
        return {"length": self.reply_words, "duration": self.reply_seconds}


FieldT = TypeVar("FieldT")


def _field(data: JSONReadObject, name: str, path: Path, kinds: tuple[type[FieldT], ...]) -> FieldT:
    if name not in data:
        raise DialogueFileError(f"{path}: field {name!r} is missing")
    value = data[name]
    if not isinstance(value, kinds) or isinstance(value, bool):
        raise DialogueFileError(f"{path}: field {name!r} has the wrong type ({value!r})")
    return value


def _audio_path(value: JSONReadValue, folder: Path, path: Path, where: str) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise DialogueFileError(f"{path}: field {where} must be a path or null")
    found = Path(value)
    return found if found.is_absolute() else folder / found


def load_dialogue(folder: Path) -> StoredDialogue:
    """The dialogue stored in a unit folder; ``DialogueFileError`` naming file and field."""
    path = folder / DIALOGUE_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DialogueFileError(f"{path}: the unit has no dialogue file") from None
    except json.JSONDecodeError as exc:
        raise DialogueFileError(f"{path}: not JSON ({exc.msg})") from exc
    if not isinstance(data, dict):
        raise DialogueFileError(f"{path}: expected an object")
    turns = []
    for n, raw in enumerate(_field(data, "turns", path, (list,))):
        where = f"turns[{n}]"
        if not isinstance(raw, dict):
            raise DialogueFileError(f"{path}: field {where} must be an object")
        reply = raw.get("reply_text")
        duration = raw.get("reply_duration_s")
        if reply is not None and not isinstance(reply, str):
            raise DialogueFileError(f"{path}: field {where}.reply_text must be text or null")
        if duration is not None and not isinstance(duration, int | float):
            raise DialogueFileError(f"{path}: field {where}.reply_duration_s must be a number")
        turns.append(
            StoredTurn(
                index=int(raw.get("index", n + 1)),
                user_text=str(raw.get("user_text") or ""),
                user_audio=_audio_path(raw.get("user_audio"), folder, path, f"{where}.user_audio"),
                reply_text=reply,
                reply_audio=_audio_path(
                    raw.get("reply_audio"), folder, path, f"{where}.reply_audio"
                ),
                reply_duration_s=None if duration is None else float(duration),
                reply_transcript_only=bool(raw.get("reply_transcript_only")),
            )
        )
    return StoredDialogue(
        dialogue=str(_field(data, "dialogue", path, (str,))),
        system=str(_field(data, "system", path, (str,))),
        dimension=str(data.get("dimension") or ""),
        turns=tuple(turns),
    )


def transcript(dialogue: StoredDialogue, label: str) -> str:
    """The annotated transcript of one side (tags such as ``[phone ringing]`` kept)."""
    lines = [f"=== Dialogue with model {label} ==="]
    for turn in dialogue.turns:
        lines.append(f"Turn {turn.index}")
        lines.append(f"User: {turn.user_text}")
        reply = (turn.reply_text or "").strip() or NO_REPLY_TEXT
        lines.append(f"Model {label}: {reply}")
    return "\n".join(lines)


def spoken_text(text: str) -> str:
    """A transcript without its annotations, for speaking it when no audio is stored."""
    return " ".join(_TAG.sub(" ", text).split())


Speak = Callable[[str], Audio]


def turn_segments(
    dialogue: StoredDialogue, speak: Speak, label: str = "", turns: int | None = None
) -> list[tuple[str, Audio]]:
    """Per turn (the first ``turns``, default all): the cue "turn N", the user's audio, the
    cue "model's response" and the reply audio. ``label`` prefixes the segment names."""
    segments: list[tuple[str, Audio]] = []
    prefix = f"{label} " if label else ""
    for turn in dialogue.turns[:turns]:
        segments.append((f"cue: turn {turn.index}", speak(f"Turn {turn.index}.")))
        if turn.user_audio is not None:
            user = read_audio(turn.user_audio)
        else:
            user = speak(spoken_text(turn.user_text) or "silence")
        segments.append((f"{prefix}turn {turn.index} user", user))
        segments.append((f"cue: {prefix}turn {turn.index} response", speak("Model's response.")))
        if turn.reply_audio is not None and turn.reply_audio.is_file():
            reply = read_audio(turn.reply_audio)
        elif turn.reply_transcript_only and spoken_text(turn.reply_text or ""):
            reply = speak(spoken_text(turn.reply_text or ""))
        else:
            reply = speak(NO_SPOKEN_REPLY_CUE)
        segments.append((f"{prefix}turn {turn.index} reply", reply))
    return segments


def comparison_segments(
    sides: Sequence[tuple[str, StoredDialogue]], speak: Speak
) -> list[tuple[str, Audio]]:
    """``(what, audio)`` for every segment of the comparison file, in order."""
    segments: list[tuple[str, Audio]] = []
    for label, dialogue in sides:
        segments.append(
            (f"cue: dialogue with model {label}", speak(f"Dialogue with model {label}."))
        )
        segments += turn_segments(dialogue, speak, label)
    return segments


def render_comparison(
    target: Path, sides: Sequence[tuple[str, StoredDialogue]], speak: Speak
) -> Audio:
    """The comparison file at ``target``, rendered once: a file already there is reused, with
    the segment list beside it (``<target>.json``: names, starts and ends in seconds)."""
    if target.is_file():
        return read_audio(target)
    return render_segments(target, comparison_segments(sides, speak))


def render_dialogue(
    target: Path, dialogue: StoredDialogue, speak: Speak, turns: int | None = None
) -> Audio:
    """One dialogue as a rubric judge hears it (the reference's layout: per turn the cue
    "turn N", the user, the cue "model's response", the reply), rendered once to ``target``
    with its segment list beside it."""
    if target.is_file():
        return read_audio(target)
    return render_segments(target, turn_segments(dialogue, speak, turns=turns))


def render_segments(target: Path, parts: Sequence[tuple[str, Audio]]) -> Audio:
    """``parts`` joined with one second of silence between them, written to ``target`` with
    the layout beside it."""
    # every part at the file's rate first, so the layout counts the samples actually written
    segments = [
        (name, part if part.rate == COMPARISON_RATE else resample(part, COMPARISON_RATE))
        for name, part in parts
    ]
    audio = concatenate([a for _, a in segments], SEGMENT_GAP_S, rate=COMPARISON_RATE)
    gap = round(SEGMENT_GAP_S * COMPARISON_RATE)
    layout_rows: JSONArray = []
    start = 0
    for name, part in segments:
        end = start + part.num_samples
        layout_rows.append(
            {"segment": name, "start_s": start / COMPARISON_RATE, "end_s": end / COMPARISON_RATE}
        )
        start = end + gap
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_files.write_json_atomic(target.with_suffix(".json"), {"segments": layout_rows})
    write_audio(audio, target)
    return audio
