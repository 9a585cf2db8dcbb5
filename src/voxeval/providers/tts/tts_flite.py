"""Speech synthesis with the Debian ``flite`` binary (CMU voices slt, rms, awb, kal16)."""

from __future__ import annotations

import shutil
from pathlib import Path

from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject
from voxeval.providers.base import Voice
from voxeval.providers.provider_kinds import TTS_PROVIDERS
from voxeval.providers.tts.cli_tts import CommandLineTTS

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


@TTS_PROVIDERS.register("flite")
class FliteTTS(CommandLineTTS):
    """flite via subprocess; ``voice`` is the default voice name (slt, rms, awb, kal16)."""

    name = "flite"
    program = "flite"

    def __init__(self, voice: str = "slt") -> None:
        self._find_program()
        self.default_voice = _check_voice(voice)

    def identity(self) -> JSONObject:
        return {"provider": self.name, "version": self.version, "default_voice": self.default_voice}

    def voices(self) -> list[Voice]:
        return flite_catalogue()

    def check_voice(self, voice: str) -> str:
        return _check_voice(voice)

    def command(self, voice: str, text: str, folder: Path) -> tuple[list[str], str | None]:
        text_file = folder / "text.txt"
        text_file.write_text(text, encoding="utf-8")
        return ["-voice", voice, "-f", str(text_file), "-o", str(folder / "speech.wav")], None
