"""Shared plumbing of TTS engines run as command-line programs (espeak-ng, flite): finding the
binary, availability, and one subprocess per utterance writing a WAV that is read back."""

from __future__ import annotations

import abc
import shutil
import subprocess
import tempfile
from pathlib import Path

from voxeval.audio import Audio, read_audio
from voxeval.errors import ConfigError, ProviderUnavailable
from voxeval.json_types import JSONValue
from voxeval.providers.base import Availability, ProviderBase


class CommandLineTTS(ProviderBase, abc.ABC):
    """Base of a TTS whose ``program`` (also its Debian package name) synthesizes one utterance
    per run. Subclasses set ``name`` and ``program`` and say how to call it."""

    name: str
    program: str
    binary: str
    version: str
    default_voice: str

    def _find_program(self) -> None:
        binary = shutil.which(self.program)
        if binary is None:
            raise ProviderUnavailable(f"tts '{self.name}': {self.program} binary not found")
        self.binary = binary
        self.version = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, check=False, timeout=30
        ).stdout.strip()

    @classmethod
    def availability(cls, **_options: JSONValue) -> Availability:
        if shutil.which(cls.program) is None:
            return Availability(
                False,
                f"{cls.program} binary not found (Debian/Ubuntu: apt-get install {cls.program})",
            )
        return Availability(True)

    @abc.abstractmethod
    def check_voice(self, voice: str) -> str:
        """The engine's own name for ``voice``; raises ConfigError for an unknown one."""

    @abc.abstractmethod
    def command(self, voice: str, text: str, folder: Path) -> tuple[list[str], str | None]:
        """Arguments after the binary that write ``folder/speech.wav``, and the stdin text."""

    def synthesize(self, text: str, *, voice: str | None = None) -> Audio:
        if not text.strip():
            raise ConfigError(f"tts '{self.name}': text to synthesize is empty")
        name = self.check_voice(voice) if voice else self.default_voice
        with tempfile.TemporaryDirectory(prefix=f"voxeval-{self.name}-") as tmp:
            folder = Path(tmp)
            out = folder / "speech.wav"
            args, stdin = self.command(name, text, folder)
            proc = subprocess.run(
                [self.binary, *args],
                input=stdin,
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            if proc.returncode != 0 or not out.exists():
                raise ProviderUnavailable(
                    f"tts '{self.name}': {self.program} failed for voice {name!r}: "
                    f"{proc.stderr.strip()}"
                )
            audio = read_audio(out)
        return Audio(audio.samples, audio.rate, source=f"{self.name}:{name}")
