"""Render one user turn of a dialogue to audio, its tags turned into sound (see ``mtalk_tags``).

The turn is laid out on a timeline, left to right:

- words are synthesised by speaker A's voice (or B's after ``<Speaker B interjects>``) at
  the tempo and pitch of the delivery cues in force (the engine's own controls where it has
  them, see ``Speaker``), trimmed, set to -20 dBFS RMS (B at -23: another person, a little
  further away), then given the cues' level change and 6 Hz tremolo; hesitant speech gets an
  "um" and a short silence before it;
- ``<pause>`` inserts silence, vocal sounds are inserted where they are written;
- an ambient tag starts its sound there and holds the speech back for ``EVENT_LEAD_S`` (so the
  sound is first heard on its own, as when someone stops at a ringing phone); a foreground
  event keeps its own length, a background runs to the end of the turn.

Every placed piece is recorded with its start and end in seconds (``events``), which is what
the build manifest keeps and what the tests measure against. All randomness comes from the
``seed`` given per turn.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Required, TypedDict

import numpy as np

from voxeval.audio import Audio, gain_db, resample, rms, trim_silence
from voxeval.audio.event_sounds import render_event
from voxeval.audio.levels import normalise_rms
from voxeval.audio.mix import babble
from voxeval.audio.sound_textures import render_texture
from voxeval.benchmarks.mtalk.mtalk_tags import (
    AMBIENT_SOUNDS,
    LAUGH_TEXT,
    PAUSES_S,
    Delivery,
    TagPiece,
    Words,
    parse_turn,
)
from voxeval.errors import ProviderUnavailable
from voxeval.providers.base import TTS

RATE = 24000  # the sample rate of the released MTalk-Bench recordings
SPEECH_RMS_DBFS = -20.0
SPEAKER_B_RMS_DBFS = -23.0
LEAD_IN_S = 0.3
WORD_GAP_S = 0.15
EVENT_LEAD_S = 0.7
TAIL_S = 0.4
HESITATION_TEXT = "um"
HESITATION_PAUSE_S = 0.45
TREMOLO_HZ = 6.0
VOCAL_LEVEL_DBFS = {"sigh": -28.0, "cough": -22.0}
LAUGH_PITCH_ST, LAUGH_TEMPO = 2.0, 1.2
BACKGROUND_FADE_S = 0.05
PEAK_LIMIT = 0.99
# An impulsive event (clicks, knocks) at its level could peak near full scale; capping its
# peak keeps speech plus event under PEAK_LIMIT, so the turn is rarely scaled as a whole.
EVENT_PEAK_MAX = 0.4
BABBLE_TALKERS = 3


# A TTS engine set to a tempo and a pitch shift (semitones) with its own controls, and the
# part of the pitch shift it could not make (done afterwards by resampling-free DSP).
TunedEngine = Callable[[float, float], tuple[TTS, float]]


@dataclass(frozen=True)
class Speaker:
    """A TTS engine and voice (``voice`` as the engine names it); ``name`` as the catalogue
    names it (``espeak:en-us+f2``). ``tuned`` gives the engine set to a tempo and pitch with
    its own controls (espeak: speed and pitch; Piper: length scale); without it, or for what
    it cannot do, tempo and pitch are changed afterwards with librosa (phase vocoder), which
    costs some intelligibility."""

    name: str
    tts: TTS
    voice: str | None = None
    tuned: TunedEngine | None = None

    def say(
        self, text: str, rate: int = RATE, *, tempo: float = 1.0, pitch_st: float = 0.0
    ) -> Audio:
        tts, pitch_left, tempo_left = self.tts, pitch_st, tempo
        if self.tuned is not None and (tempo != 1.0 or pitch_st != 0.0):
            tts, pitch_left = self.tuned(tempo, pitch_st)
            tempo_left = 1.0
        audio = tts.synthesize(text, voice=self.voice)
        trimmed = trim_silence(audio, pad_s=0.02)
        audio = audio if trimmed.is_empty() else trimmed
        if pitch_left or tempo_left != 1.0:
            audio = shift(audio, tempo_left, pitch_left)
        return resample(audio, rate)


class CueEvent(TypedDict, total=False):
    """One placed piece of a rendered turn: its kind and span in seconds, plus what that kind
    records (the words and voice of speech, the tag of a cue, the sound of an ambient event)."""

    kind: Required[str]
    start_s: Required[float]
    end_s: Required[float]
    tag: str
    text: str
    speaker: str
    voice: str
    cues: list[str]
    delivery: dict[str, float | bool]
    approximations: list[str]
    approximation: str
    rendered: bool
    sound: str
    source: str
    background: bool
    level_dbfs: float


@dataclass
class RenderedTurn:
    audio: Audio
    events: list[CueEvent] = field(default_factory=list)
    peak_scaled: bool = False  # the whole turn was turned down to stay under full scale


def _librosa() -> ModuleType:
    try:
        import librosa
    except ImportError as exc:  # an optional extra
        raise ProviderUnavailable(
            "rendering delivery cues needs librosa (pip install 'voxeval[embedded]')"
        ) from exc
    return librosa


def shift(audio: Audio, tempo: float, pitch_st: float) -> Audio:
    """Time stretch and pitch shift with librosa (for engines without such controls)."""
    y: Any = audio.samples.astype(np.float32)
    if pitch_st:
        y = _librosa().effects.pitch_shift(y, sr=audio.rate, n_steps=pitch_st)
    if tempo != 1.0:
        y = _librosa().effects.time_stretch(y, rate=tempo)
    return audio.with_samples(np.asarray(y, dtype=np.float32))


def deliver(audio: Audio, delivery: Delivery) -> Audio:
    """The level and tremolo of ``delivery`` (tempo and pitch are made by ``Speaker.say``)."""
    y = audio.samples.astype(np.float64)
    if delivery.tremolo:
        t = np.arange(y.size) / audio.rate
        y = y * (1.0 - delivery.tremolo * (0.5 + 0.5 * np.sin(2 * np.pi * TREMOLO_HZ * t)))
    out = audio.with_samples(y.astype(np.float32))
    return gain_db(out, delivery.gain_db) if delivery.gain_db else out


def _say(speaker: Speaker, text: str, delivery: Delivery, level: float) -> Audio:
    spoken = speaker.say(text, tempo=delivery.tempo, pitch_st=delivery.pitch_st)
    return deliver(_at_level(spoken, level), delivery)


def _at_level(audio: Audio, dbfs: float) -> Audio:
    return normalise_rms(audio, dbfs, max_gain_db=None)


def _seconds(samples: int, rate: int = RATE) -> float:
    return round(samples / rate, 4)


class TurnRenderer:
    """Renders turns with two speakers; ``babble_clips`` gives TTS speech of other voices
    (called only when a turn has babble). ``cues=False`` renders delivery cues neutrally and
    ``ambient=False`` leaves ambient sounds out (the timeline is unchanged): the references
    that measurements of a cue or an event are compared against."""

    def __init__(
        self,
        speaker_a: Speaker,
        speaker_b: Speaker,
        babble_clips: Callable[[], list[Audio]],
        *,
        cues: bool = True,
        ambient: bool = True,
    ) -> None:
        self.speaker_a = speaker_a
        self.speaker_b = speaker_b
        self.babble_clips = babble_clips
        self.cues = cues
        self.ambient = ambient

    def render(self, transcript: str, seed: int, where: str = "turn") -> RenderedTurn:
        script = parse_turn(transcript, where)
        rng = np.random.default_rng(seed)
        track: list[np.ndarray] = [np.zeros(round(LEAD_IN_S * RATE), dtype=np.float32)]
        cursor = track[0].size
        events: list[CueEvent] = []
        ambient: list[tuple[str, str, int]] = []  # (tag, name, start sample)

        def place(audio: Audio) -> tuple[int, int]:
            nonlocal cursor
            start = cursor
            track.append(audio.samples.astype(np.float32))
            cursor += audio.num_samples
            return start, cursor

        def gap(seconds: float) -> tuple[int, int]:
            return place(Audio.silence(seconds, RATE))

        hesitated = False
        speaker_tag: str | None = None
        for piece in script.pieces:
            if isinstance(piece, Words):
                placed = self._words(piece, place, gap, hesitated)
                if piece.speaker == "B" and speaker_tag is not None:
                    placed[-1]["tag"] = speaker_tag  # the interjection the tag announced
                events.extend(placed)
                hesitated = piece.speaker == "A" and piece.delivery.hesitant and self.cues
                gap(WORD_GAP_S)
                continue
            assert isinstance(piece, TagPiece)
            if piece.kind == "pause":
                start, end = gap(PAUSES_S[piece.name])
                events.append(self._event(piece, "pause", start, end))
            elif piece.kind == "vocal":
                start, end = place(self._vocal(piece.name, int(rng.integers(2**31))))
                gap(WORD_GAP_S)
                entry = self._event(piece, "vocal", start, end)
                entry["approximation"] = (
                    "laughter rendered as the speaker saying 'ha ha ha', raised and quickened"
                    if piece.name == "laughs"
                    else f"{piece.name} rendered as generated shaped noise"
                )
                events.append(entry)
            elif piece.kind == "ambient":
                ambient.append((piece.tag, piece.name, cursor))
                gap(EVENT_LEAD_S)
            elif piece.kind == "instruction":
                entry = self._event(piece, "instruction", cursor, cursor)
                entry["rendered"] = False  # about the reply: annotation only
                events.append(entry)
            elif piece.kind == "delivery":
                events.append(self._event(piece, "delivery", cursor, cursor))
            elif piece.kind == "speaker":
                speaker_tag = piece.tag  # the words that follow carry the speaker
        gap(TAIL_S)
        speech = np.concatenate(track).astype(np.float64)
        speech, ambient_events = self._mix_ambient(speech, ambient, rng)
        events.extend(ambient_events)
        self._span_tags(events)
        top = float(np.max(np.abs(speech))) if speech.size else 0.0
        scaled = top > PEAK_LIMIT
        if scaled:
            speech *= PEAK_LIMIT / top
        audio = Audio(speech.astype(np.float32), RATE, source=where)
        events.sort(key=lambda e: (e["start_s"], e["end_s"]))
        return RenderedTurn(audio=audio, events=events, peak_scaled=scaled)

    def _words(
        self,
        piece: Words,
        place: Callable[[Audio], tuple[int, int]],
        gap: Callable[[float], tuple[int, int]],
        hesitated: bool,
    ) -> list[CueEvent]:
        speaker = self.speaker_a if piece.speaker == "A" else self.speaker_b
        level = SPEECH_RMS_DBFS if piece.speaker == "A" else SPEAKER_B_RMS_DBFS
        delivery = piece.delivery if self.cues else Delivery()
        out: list[CueEvent] = []
        if delivery.hesitant and not hesitated:
            filler = _say(speaker, HESITATION_TEXT, delivery, level)
            start, end = place(filler)
            gap(HESITATION_PAUSE_S)
            out.append(
                {"kind": "hesitation", "text": HESITATION_TEXT, "start_s": _seconds(start),
                 "end_s": _seconds(end + round(HESITATION_PAUSE_S * RATE))}
            )  # fmt: skip
        audio = _say(speaker, piece.text, delivery, level)
        start, end = place(audio)
        entry: CueEvent = {
            "kind": "speech",
            "speaker": piece.speaker,
            "voice": speaker.name,
            "text": piece.text,
            "start_s": _seconds(start),
            "end_s": _seconds(end),
        }
        if not delivery.neutral:
            entry["cues"] = list(delivery.cues)
            entry["delivery"] = delivery.describe()
            if delivery.approximations:
                entry["approximations"] = list(delivery.approximations)
        out.append(entry)
        return out

    def _vocal(self, name: str, seed: int) -> Audio:
        if name == "laughs":
            laugh = Delivery(tempo=LAUGH_TEMPO, pitch_st=LAUGH_PITCH_ST)
            return _say(self.speaker_a, LAUGH_TEXT, laugh, SPEECH_RMS_DBFS - 2.0)
        return _at_level(render_event(name, seed, RATE), VOCAL_LEVEL_DBFS[name])

    @staticmethod
    def _event(piece: TagPiece, kind: str, start: int, end: int) -> CueEvent:
        return {"kind": kind, "tag": piece.tag, "start_s": _seconds(start), "end_s": _seconds(end)}

    def _mix_ambient(
        self, speech: np.ndarray, ambient: list[tuple[str, str, int]], rng: np.random.Generator
    ) -> tuple[np.ndarray, list[CueEvent]]:
        events: list[CueEvent] = []
        sounds: list[tuple[int, np.ndarray]] = []
        for tag, name, start in ambient:
            spec = AMBIENT_SOUNDS[name]
            seed = int(rng.integers(2**31))
            kind, _, what = spec.source.partition(":")
            if spec.background:
                length = max(speech.size - start, round(0.5 * RATE))
                seconds = length / RATE
                if kind == "texture":
                    clip = render_texture(what, seed, seconds, RATE)
                else:
                    clip = babble(
                        self.babble_clips(), BABBLE_TALKERS, seed=seed, duration_s=seconds,
                        rate=RATE,
                    )  # fmt: skip
                data = clip.samples[:length].astype(np.float64)
                fade = round(BACKGROUND_FADE_S * RATE)
                data[:fade] *= np.linspace(0.0, 1.0, fade)
                data[-fade:] *= np.linspace(1.0, 0.0, fade)
            else:
                data = render_event(what, seed, RATE).samples.astype(np.float64)
            level = rms(Audio(data.astype(np.float32), RATE))
            data *= 10 ** (spec.level_dbfs / 20.0) / level
            top = float(np.max(np.abs(data)))
            if top > EVENT_PEAK_MAX:
                data *= EVENT_PEAK_MAX / top
            sounds.append((start, data))
            events.append(
                {
                    "kind": "ambient",
                    "tag": tag,
                    "sound": name,
                    "source": f"generated:{spec.source}",
                    "background": spec.background,
                    "level_dbfs": round(
                        20 * np.log10(rms(Audio(data.astype(np.float32), RATE))), 2
                    ),
                    "start_s": _seconds(start),
                    "end_s": _seconds(start + data.size),
                }
            )
        total = max([speech.size, *(s + d.size for s, d in sounds)])
        out = np.zeros(total)
        out[: speech.size] = speech
        for start, data in sounds:
            if self.ambient:
                out[start : start + data.size] += data
        return out, events

    @staticmethod
    def _span_tags(events: list[CueEvent]) -> None:
        """A delivery cue's span: the speech it shaped; a speaker tag's: the words that
        followed it."""
        speech = [e for e in events if e["kind"] == "speech"]
        for event in events:
            if event["kind"] != "delivery":
                continue
            name = event["tag"].strip("<>").strip().lower()
            shaped = [
                e for e in speech if e["start_s"] >= event["start_s"] and name in e.get("cues", [])
            ]
            if shaped:
                event["start_s"] = shaped[0]["start_s"]
                event["end_s"] = shaped[-1]["end_s"]
