"""Formant speech synthesis with the Debian ``espeak-ng`` binary: 8 English accents and 2
Spanish ones x variants.

Robotic (MOS ~2.2) but fast and varied; useful to widen the accent/speaker grid of a benchmark.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject
from voxeval.providers.base import Voice
from voxeval.providers.provider_kinds import TTS_PROVIDERS
from voxeval.providers.tts.cli_tts import CommandLineTTS

ESPEAK_MOS = 2.2  # measured naturalness (DistillMOS 2.1-2.5) from EMBEDDED_MODELS.md

# espeak-ng language voice -> accent label used in speaker profiles.
ESPEAK_ACCENTS: dict[str, str] = {
    "en-us": "us",
    "en-us-nyc": "us-nyc",
    "en-gb": "gb",
    "en-gb-x-rp": "gb-rp",
    "en-gb-scotland": "scottish",
    "en-gb-x-gbclan": "gb-lancaster",
    "en-gb-x-gbcwmd": "gb-west-midlands",
    "en-029": "caribbean",
}

# Voices in other languages: espeak-ng voice -> (language, accent label). Spanish from Spain
# and Latin-American Spanish, for live calls in Spanish.
ESPEAK_OTHER_LANGUAGES: dict[str, tuple[str, str]] = {
    "es": ("es", "spain"),
    "es-419": ("es", "latin-american"),
}

# espeak-ng resolves "en-gb" to a voice that ignores "+variant"; its British voice is "en".
ESPEAK_ARGUMENT = {"en-gb": "en"}

# Variant -> (gender, age band, timbre). Timbre follows each variant file's formant scaling
# and pitch range: formants raised above the base voice = "bright", kept or lowered = "dark".
ESPEAK_VARIANTS: dict[str, tuple[str, str, str]] = {
    "m1": ("male", "adult", "dark"),
    "m2": ("male", "adult", "bright"),
    "m3": ("male", "adult", "dark"),
    "m4": ("male", "adult", "bright"),
    "m5": ("male", "adult", "dark"),
    "m6": ("male", "adult", "bright"),
    "m7": ("male", "adult", "dark"),
    "m8": ("male", "adult", "dark"),
    "grandpa": ("male", "senior", "dark"),
    "f1": ("female", "adult", "bright"),
    "f2": ("female", "adult", "dark"),
    "f3": ("female", "adult", "bright"),
    "f4": ("female", "adult", "bright"),
    "f5": ("female", "adult", "dark"),
    "grandma": ("female", "senior", "dark"),
}

DEFAULT_VOICE = "en-us+m3"


def espeak_binary() -> str | None:
    return shutil.which("espeak-ng")


def espeak_catalogue() -> list[Voice]:
    """Every accent x variant combination, named ``espeak:<accent voice>+<variant>``."""
    voices = []
    languages = {lang: ("en", accent) for lang, accent in ESPEAK_ACCENTS.items()}
    for lang, (language, accent) in {**languages, **ESPEAK_OTHER_LANGUAGES}.items():
        for variant, (gender, age, timbre) in ESPEAK_VARIANTS.items():
            voices.append(
                Voice(
                    name=f"espeak:{lang}+{variant}",
                    engine="espeak",
                    gender=gender,
                    age=age,
                    accent=accent,
                    timbre=timbre,
                    quality=ESPEAK_MOS,
                    details={"rate": 22050, "license": "GPL-3.0-or-later", "natural": False},
                    language=language,
                )
            )
    return voices


def _check_voice(voice: str) -> str:
    voice = voice.removeprefix("espeak:")
    lang, _, variant = voice.partition("+")
    known_voices = {**ESPEAK_ACCENTS, **ESPEAK_OTHER_LANGUAGES}
    if lang not in known_voices or (variant and variant not in ESPEAK_VARIANTS):
        known = ", ".join(known_voices)
        raise ConfigError(
            f"tts 'espeak': unknown voice {voice!r}; use <accent>+<variant> with accent in "
            f"{known} and variant in {', '.join(ESPEAK_VARIANTS)}"
        )
    return voice


@TTS_PROVIDERS.register("espeak")
class EspeakTTS(CommandLineTTS):
    """espeak-ng via subprocess. ``speed`` in words per minute (-s), ``pitch`` 0-99 (-p)."""

    name = "espeak"
    program = "espeak-ng"

    def __init__(self, speed: int = 165, pitch: int = 50, voice: str = DEFAULT_VOICE) -> None:
        if not 80 <= speed <= 450:
            raise ConfigError(f"tts 'espeak': speed must be 80-450 words/min, got {speed}")
        if not 0 <= pitch <= 99:
            raise ConfigError(f"tts 'espeak': pitch must be 0-99, got {pitch}")
        self._find_program()
        self.speed = int(speed)
        self.pitch = int(pitch)
        self.default_voice = _check_voice(voice)

    def identity(self) -> JSONObject:
        return {
            "provider": self.name,
            "version": self.version,
            "default_voice": self.default_voice,
            "speed": self.speed,
            "pitch": self.pitch,
        }

    def voices(self) -> list[Voice]:
        return espeak_catalogue()

    def check_voice(self, voice: str) -> str:
        return _check_voice(voice)

    def command(self, voice: str, text: str, folder: Path) -> tuple[list[str], str | None]:
        lang, plus, variant = voice.partition("+")
        arg = ESPEAK_ARGUMENT.get(lang, lang) + plus + variant
        # Text goes on stdin so that text starting with "-" is never read as an option.
        args = ["-v", arg, "-s", str(self.speed), "-p", str(self.pitch)]
        return [*args, "-w", str(folder / "speech.wav"), "--stdin"], text
