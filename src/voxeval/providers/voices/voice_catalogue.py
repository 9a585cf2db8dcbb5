"""The voice catalogue and speaker-profile selection.

``voice_catalogue()`` lists every voice of every TTS engine available here, with metadata.
``select_voice(profile)`` picks the closest real voice for a requested speaker profile, plus a
speaker transform (pitch, formants, tempo) that moves it toward the profile, and reports how
far the result still is from the request. ``render_speech`` does both and synthesizes.

Profile acoustics are textbook averages, used only to size transforms: typical f0, formant
scale relative to an adult male vocal tract, and speaking tempo per gender and age band.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable
from dataclasses import dataclass

from voxeval.audio import Audio
from voxeval.config import ProviderSpec
from voxeval.errors import ConfigError, ProviderUnavailable
from voxeval.providers.asr.spoken_language import LANGUAGE_NAMES, base_language
from voxeval.providers.base import TTS, Voice
from voxeval.providers.factory import availability, create_provider
from voxeval.providers.tts.tts_espeak import espeak_catalogue
from voxeval.providers.tts.tts_flite import flite_catalogue
from voxeval.providers.tts.tts_kokoro import KOKORO_VOICES
from voxeval.providers.tts.tts_piper import PIPER_VOICES
from voxeval.providers.voices.speaker_transform import SpeakerTransform

GENDERS = ("male", "female")
AGES = ("child", "adolescent", "adult", "senior")
TIMBRES = ("bright", "dark")
LOCAL_ENGINES = ("piper", "kokoro", "espeak", "flite")
# Neural voices that sound like people: the default for rendering spoken queries. The formant
# synthesizers (espeak-ng, flite) are an explicit choice and the "synthetic voice" condition.
NATURAL_ENGINES = ("piper", "kokoro")
FORMANT_ENGINES = ("espeak", "flite")

# (gender, age) -> (typical f0 in Hz, formant scale vs adult male, speaking tempo vs adult)
ACOUSTICS: dict[tuple[str, str], tuple[float, float, float]] = {
    ("male", "child"): (240.0, 1.22, 0.90),
    ("male", "adolescent"): (150.0, 1.10, 1.00),
    ("male", "adult"): (115.0, 1.00, 1.00),
    ("male", "senior"): (125.0, 0.98, 0.85),
    ("female", "child"): (265.0, 1.28, 0.90),
    ("female", "adolescent"): (215.0, 1.17, 1.00),
    ("female", "adult"): (200.0, 1.15, 1.00),
    ("female", "senior"): (180.0, 1.12, 0.85),
}
TIMBRE_FORMANT = {"bright": 1.04, "dark": 0.96}
MAX_PITCH_SHIFT = 12.0
MIN_FORMANT, MAX_FORMANT = 0.7, 1.4  # the transform's supported range

# Distance weights: 0 would be a native voice with exactly the requested metadata at MOS 5.
W_GENDER, W_GENDER_CHILD = 0.5, 0.2  # children's voices differ little by gender
W_AGE_BAND = 0.1  # per band of native age mismatch (articulation, voice quality)
W_ACCENT_FAMILY, W_ACCENT_OTHER = 0.3, 1.0  # accents cannot be transformed
W_TIMBRE = 0.05
W_PITCH, W_FORMANT, W_TEMPO, W_PITCH_CLAMPED = 0.03, 1.5, 0.8, 0.1
W_QUALITY = 0.4


def profile_fields(text: str, words: Iterable[str], where: str) -> dict[str, str]:
    """Sort profile ``words`` into gender/age/timbre/language slots by vocabulary (a language
    is a known ISO 639-1 code such as ``es``); any other word is the accent. A slot given twice
    raises ConfigError naming ``where`` and ``text``."""
    fields: dict[str, str] = {}
    for raw in words:
        word = raw.strip().lower()
        if not word:
            continue
        slot = (
            "gender"
            if word in GENDERS
            else "age"
            if word in AGES
            else "timbre"
            if word in TIMBRES
            else "language"
            if word in LANGUAGE_NAMES
            else "accent"
        )
        if slot in fields:
            raise ConfigError(f"{where} {text!r}: two values for {slot}")
        fields[slot] = word
    return fields


@dataclass(frozen=True)
class SpeakerProfile:
    """A requested speaker: gender, age band, optional accent and timbre, and the language the
    voice must speak (only voices of that language are candidates)."""

    gender: str
    age: str = "adult"
    accent: str | None = None
    timbre: str | None = None
    language: str = "en"

    def __post_init__(self) -> None:
        if self.gender not in GENDERS:
            raise ConfigError(f"speaker profile: gender {self.gender!r} not in {GENDERS}")
        if self.age not in AGES:
            raise ConfigError(f"speaker profile: age {self.age!r} not in {AGES}")
        if self.timbre is not None and self.timbre not in TIMBRES:
            raise ConfigError(f"speaker profile: timbre {self.timbre!r} not in {TIMBRES}")

    @classmethod
    def parse(cls, text: str) -> SpeakerProfile:
        """``"female,senior,scottish,bright"``: known gender/age/timbre/language words are
        recognised in any order (``"female,adult,es"`` asks for a Spanish voice); any other word
        is the accent."""
        fields = profile_fields(text, text.split(","), "speaker profile")
        if "gender" not in fields:
            raise ConfigError(f"speaker profile {text!r}: needs a gender ({', '.join(GENDERS)})")
        return cls(**fields)

    def label(self) -> str:
        words = (self.gender, self.age, self.accent, self.timbre)
        language = None if self.language == "en" else self.language
        return ",".join(x for x in (*words, language) if x)


@dataclass(frozen=True)
class VoiceChoice:
    voice: Voice
    transform: SpeakerTransform
    distance: float
    explanation: str


def voice_catalogue(engines: tuple[str, ...] = LOCAL_ENGINES) -> list[Voice]:
    """Voices of the given local engines that can run on this machine, sorted by name."""
    builders = {
        "piper": lambda: list(PIPER_VOICES.values()),
        "kokoro": lambda: list(KOKORO_VOICES.values()),
        "espeak": espeak_catalogue,
        "flite": flite_catalogue,
    }
    voices: list[Voice] = []
    for engine in engines:
        if engine not in builders:
            raise ConfigError(f"voice catalogue: unknown engine {engine!r}; known: {LOCAL_ENGINES}")
        if availability("tts", ProviderSpec(provider=engine)).available:
            voices.extend(builders[engine]())
    return sorted(voices, key=lambda v: v.name)


def voice_language(voice: str) -> str | None:
    """The language a configured voice speaks: for ``engine:voice``, the catalogue entry's
    (None for a voice of a remote or unknown engine, whose language voxeval cannot know); for
    a speaker profile, the language it names (None when it names none: it follows the run)."""
    if ":" not in voice:
        return profile_fields(voice, voice.split(","), "speaker profile").get("language")
    engine, _, name = voice.partition(":")
    static = {"piper": lambda: list(PIPER_VOICES.values()), "espeak": espeak_catalogue}
    static["flite"] = flite_catalogue
    static["kokoro"] = lambda: list(KOKORO_VOICES.values())
    if engine not in static:
        return None
    wanted = f"{engine}:{name}"
    if engine == "espeak" and "+" not in name:
        wanted += "+"  # a bare espeak language voice: any of its variants tells the language
    for entry in static[engine]():
        if entry.name == wanted or (entry.name.startswith(wanted) and wanted.endswith("+")):
            return entry.language
    return None


def voice_quality(voice: Voice) -> float | None:
    """Measured MOS, or the middle of the engine's measured range."""
    if voice.quality is not None:
        return voice.quality
    mos_range = voice.details.get("mos_range")
    if mos_range:
        return float(sum(mos_range) / len(mos_range))
    return None


def _acoustics(gender: str, age: str, timbre: str | None) -> tuple[float, float, float]:
    f0, formant, tempo = ACOUSTICS[(gender, age)]
    return f0, formant * TIMBRE_FORMANT.get(timbre or "", 1.0), tempo


def _accent_cost(wanted: str | None, have: str) -> float:
    if wanted is None or wanted == have:
        return 0.0
    if wanted.split("-")[0] == have.split("-")[0]:
        return W_ACCENT_FAMILY
    return W_ACCENT_OTHER


def _score(profile: SpeakerProfile, voice: Voice) -> VoiceChoice | None:
    if (voice.gender, voice.age) not in ACOUSTICS:
        return None  # remote voices without metadata cannot be matched
    src_f0, src_formant, src_tempo = _acoustics(voice.gender, voice.age, voice.timbre)
    # No timbre asked for: keep the voice's own rather than pulling it toward neutral.
    wanted_timbre = profile.timbre or voice.timbre
    dst_f0, dst_formant, dst_tempo = _acoustics(profile.gender, profile.age, wanted_timbre)
    wanted_pitch = 12.0 * math.log2(dst_f0 / src_f0)
    pitch = max(-MAX_PITCH_SHIFT, min(MAX_PITCH_SHIFT, wanted_pitch))
    wanted_formant = dst_formant / src_formant
    formant = max(MIN_FORMANT, min(MAX_FORMANT, wanted_formant))
    transform = SpeakerTransform(
        pitch_semitones=round(pitch, 1),
        formant_ratio=round(formant, 3),
        tempo=round(dst_tempo / src_tempo, 2),
    )
    costs = {
        "gender": 0.0
        if voice.gender == profile.gender
        else (W_GENDER_CHILD if profile.age == "child" else W_GENDER),
        "age": W_AGE_BAND * abs(AGES.index(voice.age) - AGES.index(profile.age)),
        "accent": _accent_cost(profile.accent, voice.accent),
        "timbre": W_TIMBRE if profile.timbre and profile.timbre != voice.timbre else 0.0,
        "transform": W_PITCH * abs(transform.pitch_semitones)
        + W_FORMANT * abs(math.log(transform.formant_ratio))
        + W_TEMPO * abs(math.log(transform.tempo))
        + W_PITCH_CLAMPED * abs(wanted_pitch - pitch)
        + W_FORMANT * abs(math.log(wanted_formant / formant)),
        "quality": W_QUALITY * (5.0 - (voice_quality(voice) or 2.5)) / 4.0,
    }
    distance = round(sum(costs.values()), 4)
    notes = [f"{voice.name} is {voice.gender} {voice.age}, accent {voice.accent}"]
    if costs["accent"]:
        notes.append(f"accent {profile.accent!r} not available")
    notes.append(f"transform: {transform.describe()}")
    notes.append("cost " + ", ".join(f"{k} {v:.2f}" for k, v in costs.items() if v))
    return VoiceChoice(voice, transform, distance, "; ".join(notes))


def naturalness(profile: SpeakerProfile, voice: Voice) -> tuple[str, str | None]:
    """How natural the voice a profile gets is: ``native`` (a neural voice of the profile's
    gender and age), ``transformed`` (a neural voice of another age or gender, shifted
    toward the profile) or ``synthetic`` (a formant synthesizer), with a note for the last
    two saying that no natural voice exists for the profile."""
    if not voice.details.get("natural"):
        return "synthetic", (
            f"no natural voice for {profile.label()}: spoken by the formant synthesizer "
            f"{voice.name}"
        )
    if voice.gender == profile.gender and voice.age == profile.age:
        return "native", None
    return "transformed", (
        f"no natural {profile.age} {profile.gender} voice: {voice.name} "
        f"({voice.gender} {voice.age}) shifted toward the profile"
    )


def rank_voices(profile: SpeakerProfile, catalogue: list[Voice] | None = None) -> list[VoiceChoice]:
    """Every matchable voice of the profile's language as a choice for ``profile``, closest
    first (ties: US accent first when no accent was asked for, then by name)."""
    voices = voice_catalogue() if catalogue is None else catalogue
    wanted = base_language(profile.language)
    voices = [v for v in voices if base_language(v.language) == wanted]
    choices = [c for c in (_score(profile, v) for v in voices) if c is not None]
    return sorted(
        choices,
        key=lambda c: (c.distance, c.voice.accent != (profile.accent or "us"), c.voice.name),
    )


def select_voice(profile: SpeakerProfile, catalogue: list[Voice] | None = None) -> VoiceChoice:
    """The closest real voice plus transform for ``profile``, with its distance (0 = exact)."""
    ranked = rank_voices(profile, catalogue)
    if not ranked and profile.language != "en":
        raise ConfigError(
            f"speaker profile {profile.label()!r}: no local TTS voice speaks "
            f"{profile.language!r} (espeak-ng has Spanish voices: espeak:es+f3, espeak:es-419+m3)"
        )
    if not ranked:
        raise ProviderUnavailable(
            "no local TTS voice is available (install voxeval[embedded], espeak-ng or flite)"
        )
    return ranked[0]


_engines: dict[str, TTS] = {}
_engines_lock = threading.Lock()


def _engine(name: str) -> TTS:
    with _engines_lock:
        if name not in _engines:
            _engines[name] = create_provider("tts", name)
        return _engines[name]


def render_speech(text: str, speaker: SpeakerProfile | VoiceChoice | str) -> Audio:
    """Synthesize ``text`` for a profile (closest voice + transform), a ``VoiceChoice``, or a
    voice name ``engine:voice`` (no transform)."""
    if isinstance(speaker, SpeakerProfile):
        speaker = select_voice(speaker)
    if isinstance(speaker, VoiceChoice):
        engine, _, voice = speaker.voice.name.partition(":")
        return speaker.transform.apply(_engine(engine).synthesize(text, voice=voice))
    engine, sep, voice = speaker.partition(":")
    if not sep or not voice:
        raise ConfigError(f"voice {speaker!r}: expected 'engine:voice', e.g. 'piper:joe'")
    return _engine(engine).synthesize(text, voice=voice)
