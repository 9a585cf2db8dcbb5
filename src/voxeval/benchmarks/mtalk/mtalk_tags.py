"""What each annotation of a dialogue transcript means when the turn is rendered to audio.

A transcript is read left to right into pieces:

- words: spoken by the user (speaker A) with the delivery cues in force at that point, or by
  speaker B right after ``<Speaker B interjects>`` (until the next tag);
- ``<slow pace>``, ``<anxious tone>``, ...: a delivery cue for the rest of the turn (a later
  cue of the same aspect replaces it), realised as tempo, pitch, level and tremolo changes
  (see ``DELIVERY_CUES``); ``<pause>`` / ``<long pause>`` insert silence;
- ``<respond in ...>``: an instruction about the reply; not spoken, recorded only;
- ``[sigh]``, ``[laughs]``, ``[cough]``: a non-verbal vocal sound of the user;
- ``[phone ringing]``, ``[rain]``, ...: an ambient sound mixed in from that point (see
  ``AMBIENT_SOUNDS``): a foreground event of fixed length, or a background to the end.

An unknown annotation is an error naming it, so a new tag cannot be silently left unrendered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Literal

from voxeval.errors import ConfigError

_TAG = re.compile(r"\[([^\[\]]+)\]|<([^<>]+)>")
_SPEAKER_B = re.compile(r"^speaker b\b")
_SPEAKER_A = re.compile(r"^speaker a\b")
_INSTRUCTION = re.compile(r"^(respond|reply|answer)\b")


@dataclass(frozen=True)
class Delivery:
    """How speech is rendered: tempo factor (>1 faster), pitch shift in semitones, level
    change in dB, tremolo depth (0..1, at 6 Hz), and filler hesitations."""

    tempo: float = 1.0
    pitch_st: float = 0.0
    gain_db: float = 0.0
    tremolo: float = 0.0
    hesitant: bool = False
    cues: tuple[str, ...] = ()
    approximations: tuple[str, ...] = ()

    @property
    def neutral(self) -> bool:
        return (
            self.tempo == 1.0
            and self.pitch_st == 0.0
            and self.gain_db == 0.0
            and self.tremolo == 0.0
            and not self.hesitant
        )

    def describe(self) -> dict[str, float | bool]:
        return {
            "tempo": self.tempo,
            "pitch_semitones": self.pitch_st,
            "gain_db": self.gain_db,
            "tremolo_depth": self.tremolo,
            "hesitations": self.hesitant,
        }


@dataclass(frozen=True)
class Cue:
    """One delivery cue: the aspects it sets (None leaves an aspect as it was).

    ``approximation`` says what the cue stands for that plain DSP cannot produce (an
    emotional tone rendered as prosody changes, a whisper rendered as quiet voiced speech).
    """

    aspect: Literal["pace", "tone", "level", "pitch", "hesitation"]
    tempo: float | None = None
    pitch_st: float | None = None
    gain_db: float | None = None
    tremolo: float | None = None
    hesitant: bool | None = None
    approximation: str | None = None


DELIVERY_CUES: dict[str, Cue] = {
    "slow pace": Cue("pace", tempo=0.75),
    "fast pace": Cue("pace", tempo=1.25),
    "hesitant": Cue("hesitation", tempo=0.9, hesitant=True),
    "loud voice": Cue("level", gain_db=6.0),
    "whispering": Cue(
        "level", gain_db=-12.0, approximation="whisper rendered as quiet voiced speech"
    ),
    "low voice": Cue("pitch", pitch_st=-3.0, gain_db=-3.0),
    "high pitch": Cue("pitch", pitch_st=4.0),
    "anxious tone": Cue(
        "tone",
        tempo=1.05,
        pitch_st=2.0,
        tremolo=0.15,
        approximation="anxiety rendered as faster, higher, slightly unsteady speech",
    ),
    "angry tone": Cue(
        "tone",
        tempo=1.1,
        pitch_st=1.0,
        gain_db=5.0,
        approximation="anger rendered as louder, faster, slightly higher speech",
    ),
    "excited tone": Cue(
        "tone",
        tempo=1.1,
        pitch_st=3.0,
        gain_db=3.0,
        approximation="excitement rendered as higher, louder, faster speech",
    ),
    "sad tone": Cue(
        "tone",
        tempo=0.85,
        pitch_st=-2.0,
        gain_db=-3.0,
        approximation="sadness rendered as lower, slower, quieter speech",
    ),
    "tired voice": Cue(
        "tone",
        tempo=0.85,
        pitch_st=-2.0,
        gain_db=-4.0,
        approximation="tiredness rendered as lower, slower, quieter speech",
    ),
    "trembling voice": Cue(
        "tone",
        pitch_st=1.0,
        tremolo=0.35,
        approximation="trembling rendered as a 6 Hz level tremolo",
    ),
    "calm tone": Cue("tone", tempo=0.9, approximation="calm rendered as slightly slower speech"),
}
# Combined cues stay within a tempo range that remains intelligible.
MIN_TEMPO, MAX_TEMPO = 0.7, 1.3
PAUSES_S: dict[str, float] = {"pause": 0.8, "long pause": 1.6}

# Non-verbal vocal sounds: how each is made.
VOCAL_SOUNDS: dict[str, str] = {
    "sigh": "sigh",  # generated breath noise (audio.event_sounds)
    "cough": "cough",  # generated noise bursts
    "laughs": "laugh",  # the speaker's own voice saying "ha ha ha", raised and quickened
}
LAUGH_TEXT = "ha ha ha!"


@dataclass(frozen=True)
class AmbientSound:
    """``source``: an ``audio.event_sounds`` event, an ``audio.sound_textures`` texture, or
    ``babble`` (several TTS voices). A background lasts to the end of the turn; a foreground
    event has its own length. ``level_dbfs`` is the event's RMS while it sounds (speech is
    rendered at -20 dBFS)."""

    source: str
    background: bool
    level_dbfs: float


AMBIENT_SOUNDS: dict[str, AmbientSound] = {
    "phone ringing": AmbientSound("event:phone_ring", False, -26.0),
    "alarm": AmbientSound("event:alarm_beeps", False, -26.0),
    "keyboard typing": AmbientSound("event:keyboard_typing", False, -30.0),
    "door knock": AmbientSound("event:door_knock", False, -24.0),
    "thunder": AmbientSound("event:thunder", False, -24.0),
    "rain": AmbientSound("texture:rain", True, -34.0),
    "traffic": AmbientSound("texture:traffic", True, -32.0),
    "siren": AmbientSound("texture:siren", True, -32.0),
    "babble": AmbientSound("babble", True, -32.0),
}


@dataclass(frozen=True)
class Words:
    text: str
    speaker: Literal["A", "B"]
    delivery: Delivery


@dataclass(frozen=True)
class TagPiece:
    tag: str
    kind: Literal["pause", "instruction", "vocal", "ambient", "speaker", "delivery"]
    name: str  # the normalised tag text


@dataclass(frozen=True)
class TurnScript:
    pieces: list[Words | TagPiece] = field(default_factory=list)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().lower())


def _apply(name: str, cue: Cue, active: dict[str, str]) -> Delivery:
    """The delivery once ``cue`` is in force: a cue of an aspect already set replaces the
    earlier one, and the settings are recomputed from the cues in force."""
    active[cue.aspect] = name
    result = Delivery()
    for cue_name in active.values():
        c = DELIVERY_CUES[cue_name]
        result = replace(
            result,
            tempo=min(MAX_TEMPO, max(MIN_TEMPO, result.tempo * (c.tempo or 1.0))),
            pitch_st=result.pitch_st + (c.pitch_st or 0.0),
            gain_db=result.gain_db + (c.gain_db or 0.0),
            tremolo=max(result.tremolo, c.tremolo or 0.0),
            hesitant=result.hesitant or bool(c.hesitant),
            cues=(*result.cues, cue_name),
            approximations=(
                (*result.approximations, c.approximation)
                if c.approximation
                else result.approximations
            ),
        )
    return result


def parse_turn(transcript: str, where: str = "turn") -> TurnScript:
    """Read a transcript into words and tag pieces; unknown tags are errors."""
    pieces: list[Words | TagPiece] = []
    delivery = Delivery()
    active: dict[str, str] = {}
    speaker: Literal["A", "B"] = "A"
    position = 0
    matches = list(_TAG.finditer(transcript))
    for match in [*matches, None]:
        end = match.start() if match is not None else len(transcript)
        text = re.sub(r"\s+", " ", transcript[position:end]).strip()
        if text:
            pieces.append(Words(text, speaker, delivery if speaker == "A" else Delivery()))
            speaker = "A"  # speaker B's words run to the next tag
        if match is None:
            break
        position = match.end()
        tag = match.group(0)
        name = _norm(match.group(1) or match.group(2))
        if match.group(1) is not None:  # [sound]
            if name in VOCAL_SOUNDS:
                pieces.append(TagPiece(tag, "vocal", name))
            elif name in AMBIENT_SOUNDS:
                pieces.append(TagPiece(tag, "ambient", name))
            else:
                known = ", ".join(sorted([*VOCAL_SOUNDS, *AMBIENT_SOUNDS]))
                raise ConfigError(f"{where}: unknown sound tag {tag} (known: {known})")
        elif _SPEAKER_B.match(name):
            speaker = "B"
            pieces.append(TagPiece(tag, "speaker", "B"))
        elif _SPEAKER_A.match(name):
            speaker = "A"
            pieces.append(TagPiece(tag, "speaker", "A"))
        elif _INSTRUCTION.match(name):
            pieces.append(TagPiece(tag, "instruction", name))
        elif name in PAUSES_S:
            pieces.append(TagPiece(tag, "pause", name))
        elif name in DELIVERY_CUES:
            delivery = _apply(name, DELIVERY_CUES[name], active)
            pieces.append(TagPiece(tag, "delivery", name))
        else:
            known = ", ".join(sorted([*DELIVERY_CUES, *PAUSES_S]))
            raise ConfigError(
                f"{where}: unknown cue {tag} (known: {known}; <Speaker B ...>, <respond ...>)"
            )
    return TurnScript(pieces)
