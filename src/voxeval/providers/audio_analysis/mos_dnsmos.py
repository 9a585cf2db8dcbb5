"""DNSMOS (P.835 SIG/BAK/OVRL and P.808) from the ONNX models shipped in ``speechmos``.

The models are run directly with onnxruntime: nothing is downloaded and librosa is not needed.
Scoring follows the reference procedure: 9.01 s windows with a 1 s hop, raw outputs mapped
through the published polynomials, scores averaged over windows.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import numpy.typing as npt

from voxeval.audio import Audio, resample
from voxeval.errors import AudioError, ProviderUnavailable
from voxeval.json_types import JSONObject, JSONValue
from voxeval.providers.audio_analysis.dnsmos_features import p808_features
from voxeval.providers.base import Availability, MOSResult, ProviderBase
from voxeval.providers.provider_kinds import MOS_PROVIDERS
from voxeval.providers.runtime.onnx_models import file_sha256, has_module, onnx_session, package_dir

RATE = 16000
WINDOW_S = 9.01
WINDOW = round(WINDOW_S * RATE)
HOP = RATE
# Shorter clips are refused: repeating a fraction of a second nine seconds long says little.
MIN_SECONDS = 0.5
# Windows per model run: one. A batch of 8 took ~0.95 GB more memory while it ran than single
# windows (the scores are the same, and so is the CPU time).
_BATCH = 1

# Raw network outputs -> MOS (published with the DNSMOS models; highest power first).
_POLY: dict[bool, dict[str, tuple[float, ...]]] = {
    False: {
        "sig": (-0.08397278, 1.22083953, 0.0052439),
        "bak": (-0.13166888, 1.60915514, -0.39604546),
        "ovrl": (-0.06766283, 1.11546468, 0.04602535),
    },
    True: {
        "sig": (-0.01019296, 0.02751166, 1.19576786, -0.24348726),
        "bak": (-0.04976499, 0.44276479, -0.1644611, 0.96883132),
        "ovrl": (-0.00533021, 0.005101, 1.18058466, -0.11236046),
    },
}


def _model_paths(personalized: bool) -> tuple[Path, Path] | str:
    """(P.835 model, P.808 model) paths, or the reason they cannot be used."""
    root = package_dir("speechmos")
    if root is None:
        return "the speechmos package is not installed (pip install 'voxeval[embedded]')"
    primary = root / ("pdnsmos_models" if personalized else "dnsmos_models") / "sig_bak_ovr.onnx"
    p808 = root / "dnsmos_models" / "model_v8.onnx"
    missing = [str(p) for p in (primary, p808) if not p.is_file()]
    if missing:
        return f"speechmos is installed but its model files are missing: {', '.join(missing)}"
    return primary, p808


@MOS_PROVIDERS.register("dnsmos")
class DNSMOS(ProviderBase):
    """Non-intrusive speech quality: SIG (speech), BAK (background), OVRL and P.808 MOS."""

    name = "dnsmos"

    def __init__(self, personalized: bool = False, threads: int = 1) -> None:
        found = _model_paths(personalized)
        if isinstance(found, str):
            raise ProviderUnavailable(f"mos provider 'dnsmos': {found}")
        self.personalized = bool(personalized)
        self._primary_path, self._p808_path = found
        # no memory arena: a batch holds 1-8 windows, and an arena keeps every size's buffers
        self._primary = onnx_session(self._primary_path, threads=threads, arena=False)
        self._p808 = onnx_session(self._p808_path, threads=threads, arena=False)
        self._lock = threading.Lock()

    @classmethod
    def availability(cls, **opts: JSONValue) -> Availability:
        if not has_module("onnxruntime"):
            return Availability(False, "onnxruntime is not installed")
        found = _model_paths(bool(opts.get("personalized", False)))
        if isinstance(found, str):
            return Availability(False, found)
        return Availability(True)

    def identity(self) -> JSONObject:
        return {
            "provider": "mos:dnsmos",
            "model": "dnsmos-p835" + ("-personalized" if self.personalized else ""),
            "p835_sha256": file_sha256(self._primary_path)[:16],
            "p808_sha256": file_sha256(self._p808_path)[:16],
            "window_s": WINDOW_S,
        }

    def _prepare(self, audio: Audio) -> tuple[npt.NDArray[np.float32], JSONObject]:
        if audio.is_empty():
            raise AudioError(f"{audio.source}: DNSMOS needs non-empty audio")
        if audio.duration < MIN_SECONDS:
            raise AudioError(
                f"{audio.source}: {audio.duration:.2f} s is too short for DNSMOS "
                f"(minimum {MIN_SECONDS} s)"
            )
        details: JSONObject = {
            "input_seconds": round(audio.duration, 3),
            "input_rate": audio.rate,
        }
        samples = resample(audio, RATE).samples
        clipped = int(np.count_nonzero(np.abs(samples) > 1.0))
        if clipped:
            details["clipped_samples"] = clipped
            samples = np.clip(samples, -1.0, 1.0)
        if samples.size < WINDOW:
            # Like the reference implementation, double the clip until it fills the window
            # (so scores match published DNSMOS numbers).
            reps = 1
            while samples.size * reps < WINDOW:
                reps *= 2
            samples = np.tile(samples, reps)
            details["padding"] = f"repeated {reps}x to fill the {WINDOW_S} s window"
        return samples.astype(np.float32), details

    def predict(self, audio: Audio) -> MOSResult:
        """DNSMOS of ``audio`` (any rate; resampled to 16 kHz)."""
        samples, details = self._prepare(audio)
        # Window count as in the reference implementation (whole seconds minus the window).
        n_windows = int(np.floor(samples.size / RATE) - WINDOW_S) + 1
        starts = [i * HOP for i in range(n_windows) if i * HOP + WINDOW <= samples.size]
        raw_p835: list[npt.NDArray[np.float32]] = []
        raw_p808: list[npt.NDArray[np.float32]] = []
        for b in range(0, len(starts), _BATCH):
            batch = np.stack([samples[s : s + WINDOW] for s in starts[b : b + _BATCH]])
            mels = np.stack([p808_features(seg[:-160]) for seg in batch])
            with self._lock:
                raw_p835.append(self._primary.run(None, {"input_1": batch})[0])
                raw_p808.append(self._p808.run(None, {"input_1": mels})[0])
        p835 = np.concatenate(raw_p835).astype(np.float64)
        poly = _POLY[self.personalized]
        scores = {
            key: float(np.mean(np.poly1d(poly[key])(p835[:, i])))
            for i, key in enumerate(("sig", "bak", "ovrl"))
        }
        scores["p808"] = float(np.mean(np.concatenate(raw_p808)))
        details["windows"] = len(starts)
        model = "dnsmos-p835" + ("-personalized" if self.personalized else "")
        return MOSResult(overall=scores["ovrl"], scores=scores, model=model, details=details)
