"""Formant speech synthesis with the Debian ``espeak-ng`` binary: 8 English accents x variants.

Robotic (MOS ~2.2) but fast and varied; useful to widen the accent/speaker grid of a benchmark.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from voxeval.audio import Audio, read_audio
from voxeval.errors import ConfigError, ProviderUnavailable
from voxeval.providers.base import Availability, Voice
from voxeval.registry import register

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
    for lang, accent in ESPEAK_ACCENTS.items():
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
                )
            )
    return voices


def _check_voice(voice: str) -> str:
    voice = voice.removeprefix("espeak:")
    lang, _, variant = voice.partition("+")
    if lang not in ESPEAK_ACCENTS or (variant and variant not in ESPEAK_VARIANTS):
        known = ", ".join(ESPEAK_ACCENTS)
        raise ConfigError(
            f"tts 'espeak': unknown voice {voice!r}; use <accent>+<variant> with accent in "
            f"{known} and variant in {', '.join(ESPEAK_VARIANTS)}"
        )
    return voice


@register("tts", "espeak")
class EspeakTTS:
    """espeak-ng via subprocess. ``speed`` in words per minute (-s), ``pitch`` 0-99 (-p)."""

    name = "espeak"

    def __init__(self, speed: int = 165, pitch: int = 50, voice: str = DEFAULT_VOICE) -> None:
        if not 80 <= speed <= 450:
            raise ConfigError(f"tts 'espeak': speed must be 80-450 words/min, got {speed}")
        if not 0 <= pitch <= 99:
            raise ConfigError(f"tts 'espeak': pitch must be 0-99, got {pitch}")
        binary = espeak_binary()
        if binary is None:
            raise ProviderUnavailable("tts 'espeak': espeak-ng binary not found")
        self.binary = binary
        self.speed = int(speed)
        self.pitch = int(pitch)
        self.default_voice = _check_voice(voice)
        self.version = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, check=False, timeout=30
        ).stdout.strip()

    @classmethod
    def availability(cls, **_options: Any) -> Availability:
        if espeak_binary() is None:
            return Availability(
                False, "espeak-ng binary not found (Debian/Ubuntu: apt-get install espeak-ng)"
            )
        return Availability(True)

    def identity(self) -> dict[str, Any]:
        return {
            "provider": self.name,
            "version": self.version,
            "default_voice": self.default_voice,
            "speed": self.speed,
            "pitch": self.pitch,
        }

    def voices(self) -> list[Voice]:
        return espeak_catalogue()

    def synthesize(self, text: str, *, voice: str | None = None) -> Audio:
        if not text.strip():
            raise ConfigError("tts 'espeak': text to synthesize is empty")
        name = _check_voice(voice) if voice else self.default_voice
        with tempfile.TemporaryDirectory(prefix="voxeval-espeak-") as tmp:
            out = Path(tmp) / "speech.wav"
            lang, plus, variant = name.partition("+")
            arg = ESPEAK_ARGUMENT.get(lang, lang) + plus + variant
            cmd = [self.binary, "-v", arg, "-s", str(self.speed), "-p", str(self.pitch)]
            # Text goes on stdin so that text starting with "-" is never read as an option.
            proc = subprocess.run(
                [*cmd, "-w", str(out), "--stdin"],
                input=text,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            if proc.returncode != 0 or not out.exists():
                raise ProviderUnavailable(
                    f"tts 'espeak': espeak-ng failed for voice {name!r}: {proc.stderr.strip()}"
                )
            audio = read_audio(out)
        return Audio(audio.samples, audio.rate, source=f"espeak:{name}")
