"""Real speech for provider tests: espeak-ng synthesis, else an Asterisk prompt, else skip."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from voxeval.audio import Audio, read_audio

ASTERISK_PROMPT = Path("/usr/share/asterisk/sounds/en/all-circuits-busy-now.wav")
SENTENCE = "Please call me back tomorrow morning about the delivery of my new washing machine."


def speech_clip(tmp_dir: Path) -> Audio:
    """A few seconds of English speech, or skip the test saying what is missing."""
    espeak = shutil.which("espeak-ng")
    if espeak is not None:
        out = tmp_dir / "espeak.wav"
        subprocess.run([espeak, "-w", str(out), SENTENCE], check=True, timeout=60)
        return read_audio(out)
    if ASTERISK_PROMPT.is_file():
        return read_audio(ASTERISK_PROMPT)
    pytest.skip("no speech source: install espeak-ng or asterisk-core-sounds-en-wav")
