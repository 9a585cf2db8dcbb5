"""Speech synthesis with the Debian ``flite`` binary (CMU voices slt, rms, awb, kal16)."""

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

# Naturalness of flite voices is 2.6-3.1 (DistillMOS, EMBEDDED_MODELS.md); not per voice.
FLITE_MOS_RANGE = (2.6, 3.1)

# voice -> (gender, age, accent, timbre, technique)
FLITE_VOICES: dict[str, tuple[str, str, str, str, str]] = {
    "slt": ("female", "adult", "us", "bright", "clustergen"),
    "rms": ("male", "adult", "us", "dark", "clustergen"),
    "awb": ("male", "adult", "scottish", "bright", "clustergen"),
    "kal16": ("male", "adult", "us", "bright", "diphone"),
}


def flite_binary() -> str | None:
    return shutil.which("flite")


def flite_catalogue() -> list[Voice]:
    return [
        Voice(
            name=f"flite:{name}",
            engine="flite",
            gender=gender,
            age=age,
            accent=accent,
            timbre=timbre,
            quality=None,
            details={
                "rate": 16000,
                "mos_range": list(FLITE_MOS_RANGE),
                "technique": technique,
                "license": "BSD-like (CMU flite)",
                "natural": False,
            },
        )
        for name, (gender, age, accent, timbre, technique) in FLITE_VOICES.items()
    ]


def _check_voice(voice: str) -> str:
    voice = voice.removeprefix("flite:")
    if voice not in FLITE_VOICES:
        raise ConfigError(f"tts 'flite': unknown voice {voice!r}; known: {', '.join(FLITE_VOICES)}")
    return voice


@register("tts", "flite")
class FliteTTS:
    """flite via subprocess; ``voice`` is the default voice name (slt, rms, awb, kal16)."""

    name = "flite"

    def __init__(self, voice: str = "slt") -> None:
        binary = flite_binary()
        if binary is None:
            raise ProviderUnavailable("tts 'flite': flite binary not found")
        self.binary = binary
        self.default_voice = _check_voice(voice)
        self.version = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, check=False, timeout=30
        ).stdout.strip()

    @classmethod
    def availability(cls, **_options: Any) -> Availability:
        if flite_binary() is None:
            return Availability(
                False, "flite binary not found (Debian/Ubuntu: apt-get install flite)"
            )
        return Availability(True)

    def identity(self) -> dict[str, Any]:
        return {"provider": self.name, "version": self.version, "default_voice": self.default_voice}

    def voices(self) -> list[Voice]:
        return flite_catalogue()

    def synthesize(self, text: str, *, voice: str | None = None) -> Audio:
        if not text.strip():
            raise ConfigError("tts 'flite': text to synthesize is empty")
        name = _check_voice(voice) if voice else self.default_voice
        with tempfile.TemporaryDirectory(prefix="voxeval-flite-") as tmp:
            text_file = Path(tmp) / "text.txt"
            text_file.write_text(text, encoding="utf-8")
            out = Path(tmp) / "speech.wav"
            proc = subprocess.run(
                [self.binary, "-voice", name, "-f", str(text_file), "-o", str(out)],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            if proc.returncode != 0 or not out.exists():
                raise ProviderUnavailable(
                    f"tts 'flite': flite failed for voice {name!r}: {proc.stderr.strip()}"
                )
            audio = read_audio(out)
        return Audio(audio.samples, audio.rate, source=f"flite:{name}")
