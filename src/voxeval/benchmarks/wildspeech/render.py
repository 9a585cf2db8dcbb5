"""Speak a query with a TTS engine, realising its prosody marks with audio operations.

Engines only take plain text, so marks are realised engine-independently: the text is cut
into chunks at every marked word boundary, each chunk is synthesised on its own and trimmed,
the chunks are joined with short natural gaps, and marked chunks are edited:

- pause: silence of ``ms`` milliseconds after the word (replacing the natural gap);
- stress: the word alone, slowed (tempo 0.8), raised in pitch and made 6 dB louder than the
  surrounding speech;
- stutter: the first ``STUTTER_ONSET_S`` of the word, faded out, repeated ``repeats`` times
  with short gaps before the full word;
- rise / fall: a pitch glide of ``semitones`` over the final stretch (from ``word`` to the
  end) by variable-rate resampling (varispeed; the stretch gets slightly shorter or longer).
  The text is not cut there; the start is located by the duration of the preceding words of the
  same chunk spoken alone, and the glided tail is crossfaded in (10 ms).

A query without marks is synthesised in one piece (the most natural result).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

from voxeval.audio import Audio, concatenate, gain_db, rms, trim_silence
from voxeval.benchmarks.wildspeech.spoken_query import ProsodyMark, SpokenQuery
from voxeval.errors import ConfigError, ProviderUnavailable
from voxeval.providers.base import TTS

CHUNK_GAP_S = 0.06  # gap between separately synthesised chunks that carry no pause mark
STRESS_TEMPO = 0.8
STRESS_GAIN_DB = 6.0
STUTTER_ONSET_S = 0.12
STUTTER_GAP_S = 0.09
STUTTER_FADE_S = 0.03
CONTOUR_FADE_S = 0.01

_TOKEN = re.compile(r"\S+")
_WORD_CORE = re.compile(r"[A-Za-z0-9']+")


@dataclass(frozen=True)
class Chunk:
    """Consecutive tokens synthesised together, with the edits that apply to them."""

    text: str
    stress: ProsodyMark | None = None
    stutter: ProsodyMark | None = None
    contour: ProsodyMark | None = None
    contour_prefix: str = ""  # words of the chunk before the contour starts
    pause_after_ms: int | None = None


@dataclass(frozen=True)
class RenderedSpeech:
    audio: Audio
    chunks: list[str] = field(default_factory=list)
    marks: list[dict[str, Any]] = field(default_factory=list)


def _token_index(tokens: list[str], mark: ProsodyMark, query_id: str) -> int:
    assert mark.word is not None
    seen = 0
    for i, token in enumerate(tokens):
        if any(w.lower() == mark.word.lower() for w in _WORD_CORE.findall(token)):
            seen += 1
            if seen == mark.occurrence:
                return i
    raise ConfigError(f"query {query_id}: render: mark word {mark.word!r} not found in the text")


def plan_chunks(query: SpokenQuery) -> list[Chunk]:
    """Split the spoken text into chunks so that every mark sits on a chunk boundary."""
    tokens = _TOKEN.findall(query.spoken_text)
    if not tokens:
        raise ConfigError(f"query {query.id}: nothing to speak")
    starts: set[int] = {0}
    stress: dict[int, ProsodyMark] = {}
    stutter: dict[int, ProsodyMark] = {}
    contour: dict[int, ProsodyMark] = {}
    pauses: dict[int, int] = {}
    for mark in query.marks:
        if mark.kind in ("rise", "fall"):
            index = _token_index(tokens, mark, query.id) if mark.word else len(tokens) - 1
            contour[index] = mark  # no cut: the glide is applied inside the chunk
            continue
        index = _token_index(tokens, mark, query.id)
        if mark.kind == "pause":
            pauses[index] = mark.ms
            starts.add(index + 1)
        elif mark.kind == "stress":
            stress[index] = mark
            starts.update((index, index + 1))
        else:
            stutter[index] = mark
            starts.add(index)
    bounds = [*sorted(s for s in starts if s < len(tokens)), len(tokens)]
    chunks = []
    for a, b in itertools.pairwise(bounds):
        start = next((i for i in sorted(contour) if a <= i < b), None)
        chunks.append(
            Chunk(
                text=" ".join(tokens[a:b]),
                stress=stress.get(a),
                stutter=stutter.get(a),
                contour=contour[start] if start is not None else None,
                contour_prefix=" ".join(tokens[a:start]) if start is not None else "",
                pause_after_ms=pauses.get(b - 1),
            )
        )
    return chunks


def _speak(tts: TTS, text: str, voice: str | None) -> Audio:
    audio = tts.synthesize(text, voice=voice)
    trimmed = trim_silence(audio, pad_s=0.01)
    return audio if trimmed.is_empty() else trimmed


def _librosa() -> ModuleType:
    try:
        import librosa
    except ImportError as exc:  # an optional extra
        raise ProviderUnavailable(
            "rendering stress and pitch-contour marks needs librosa "
            "(pip install 'voxeval[embedded]')"
        ) from exc
    return librosa


def stress_word(word: Audio, semitones: float, reference_rms: float) -> Audio:
    """Slower, higher and louder than the neighbouring speech."""
    librosa = _librosa()
    y = word.samples.astype(np.float32)
    y = librosa.effects.pitch_shift(y, sr=word.rate, n_steps=min(semitones, 4.0))
    y = librosa.effects.time_stretch(y, rate=STRESS_TEMPO)
    out = word.with_samples(y)
    level = rms(out)
    if level > 0 and reference_rms > 0:
        out = out.with_samples(out.samples * (reference_rms / level))
    return gain_db(out, STRESS_GAIN_DB)


def stutter_word(word: Audio, repeats: int) -> Audio:
    """``repeats`` copies of the word's onset, each faded out, then the whole word."""
    onset_len = min(word.num_samples, round(STUTTER_ONSET_S * word.rate))
    onset = word.samples[:onset_len].astype(np.float32).copy()
    fade = min(onset_len, round(STUTTER_FADE_S * word.rate))
    if fade:
        onset[-fade:] *= np.linspace(1.0, 0.0, fade, dtype=np.float32)
    piece = word.with_samples(onset)
    return concatenate([piece] * repeats + [word], silence_s=STUTTER_GAP_S)


def pitch_glide(audio: Audio, semitones: float) -> Audio:
    """A linear pitch glide from 0 to ``semitones`` (negative = falling) by varispeed.

    The read position advances ``2**(s(t)/12)`` samples per output sample, like a tape
    speeding up (or slowing down): artefact-free, but the stretch gets shorter (longer) by the
    mean speed factor, about 15 % for +5 semitones. A phase-vocoder restretch was tried and
    made words less intelligible to ASR, so the duration change is kept.
    """
    x = audio.samples.astype(np.float64)
    n = x.size
    if n < 2:
        return audio
    a = semitones / 12.0
    if a == 0.0:
        return audio
    # The glide is linear in the *input* position p: speed(p) = 2**(a p / n). Output time is
    # k(p) = n (1 - 2**(-a p / n)) / (a ln 2); invert it to read p at every output sample.
    length = (n - 1) * (1 - 2.0 ** (-a * (n - 1) / n)) / (a * (n - 1) / n * np.log(2))
    k = np.arange(int(length))
    positions = -n / a * np.log2(1.0 - k * a * np.log(2) / n)
    return audio.with_samples(np.interp(positions, np.arange(n), x).astype(np.float32))


def tail_glide(audio: Audio, start_s: float, semitones: float) -> Audio:
    """``pitch_glide`` on the audio after ``start_s``, joined with a short crossfade."""
    start = min(max(0, round(start_s * audio.rate)), audio.num_samples - 2)
    if start == 0:
        return pitch_glide(audio, semitones)
    head = audio.samples[:start].astype(np.float32)
    tail = pitch_glide(audio.with_samples(audio.samples[start:]), semitones).samples
    fade = min(round(CONTOUR_FADE_S * audio.rate), head.size, tail.size)
    ramp = np.linspace(0.0, 1.0, fade, dtype=np.float32)
    joined = head[-fade:] * (1.0 - ramp) + tail[:fade] * ramp
    return audio.with_samples(np.concatenate([head[:-fade], joined, tail[fade:]]))


def render_query(tts: TTS, query: SpokenQuery, voice: str | None = None) -> RenderedSpeech:
    """Synthesise ``query`` with ``tts`` (``voice`` as the engine names it), marks realised."""
    if not query.marks:
        audio = _speak(tts, query.spoken_text, voice)
        return RenderedSpeech(audio=audio, chunks=[query.spoken_text])
    chunks = plan_chunks(query)
    spoken = [_speak(tts, chunk.text, voice) for chunk in chunks]
    plain = [a for a, c in zip(spoken, chunks, strict=True) if c.stress is None]
    reference = float(np.mean([rms(a) for a in plain])) if plain else rms(spoken[0])
    parts: list[Audio] = []
    applied: list[dict[str, Any]] = []
    for i, (chunk, audio) in enumerate(zip(chunks, spoken, strict=True)):
        if chunk.stutter is not None:
            audio = stutter_word(audio, chunk.stutter.repeats)
            applied.append(
                {"kind": "stutter", "word": chunk.text, "repeats": chunk.stutter.repeats}
            )
        if chunk.stress is not None:
            audio = stress_word(audio, chunk.stress.semitones, reference)
            applied.append({"kind": "stress", "word": chunk.text})
        if chunk.contour is not None:
            # Where the contour starts: the length of the chunk's earlier words spoken alone.
            start_s = (
                _speak(tts, chunk.contour_prefix, voice).duration if chunk.contour_prefix else 0.0
            )
            sign = 1.0 if chunk.contour.kind == "rise" else -1.0
            audio = tail_glide(audio, start_s, sign * chunk.contour.semitones)
            applied.append(
                {"kind": chunk.contour.kind, "from_s": round(start_s, 3), "chunk": chunk.text}
            )
        parts.append(audio)
        if i < len(chunks) - 1:
            gap_s = CHUNK_GAP_S
            if chunk.pause_after_ms is not None:
                gap_s = chunk.pause_after_ms / 1000.0
                applied.append({"kind": "pause", "after": chunk.text, "ms": chunk.pause_after_ms})
            parts.append(Audio.silence(gap_s, audio.rate))
    joined = concatenate(parts)
    return RenderedSpeech(audio=joined, chunks=[c.text for c in chunks], marks=applied)
