"""DistillMOS: a compact XLS-R-distilled naturalness/quality predictor (``torch`` extra).

``distillmos`` imports ``torchaudio`` at import time, and no torchaudio build works with the
torch version used here. Scoring does not use torchaudio, so while importing distillmos a
stand-in module takes its place if the real one cannot be imported; any attribute access
on the stand-in fails loudly, so a hidden use would not go unnoticed.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import types
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from voxeval.audio import Audio, resample
from voxeval.errors import AudioError, ProviderUnavailable
from voxeval.json_types import JSONObject, JSONValue
from voxeval.providers.base import Availability, MOSResult, ProviderBase
from voxeval.providers.provider_kinds import MOS_PROVIDERS
from voxeval.providers.runtime.onnx_models import file_sha256, has_module, package_dir

RATE = 16000
MIN_SECONDS = 0.5
MODEL_WINDOW = 122880  # samples the network scores at once (7.68 s); longer input is tiled
_IMPORT_LOCK = threading.Lock()


class _TorchaudioStandIn(types.ModuleType):
    """Placeholder for ``torchaudio``: importable, but unusable."""

    def __getattr__(self, attr: str) -> NoReturn:
        raise ProviderUnavailable(
            f"torchaudio.{attr} was used, but only a stand-in is installed "
            "(distillmos scoring is expected not to need torchaudio)"
        )


def _import_distillmos() -> types.ModuleType:
    with _IMPORT_LOCK:
        if "distillmos" in sys.modules:
            return sys.modules["distillmos"]
        stand_in = False
        try:
            import torchaudio  # noqa: F401
        except Exception:
            sys.modules["torchaudio"] = _TorchaudioStandIn("torchaudio")
            stand_in = True
        try:
            import distillmos
        finally:
            if stand_in:
                sys.modules.pop("torchaudio", None)
        return distillmos


def _weights_file() -> Path | None:
    root = package_dir("distillmos")
    if root is None:
        return None
    found = sorted(root.glob("weights/*.pt"))
    return found[-1] if found else None


@MOS_PROVIDERS.register("distillmos")
class DistillMOS(ProviderBase):
    """DistillMOS (Microsoft, MIT): one overall MOS from 1 (bad) to 5 (excellent)."""

    name = "distillmos"

    def __init__(self, threads: int = 2) -> None:
        reason = self.availability().reason
        if reason:
            raise ProviderUnavailable(f"mos distillmos: {reason}")
        import torch

        torch.set_num_threads(int(threads))
        module = _import_distillmos()
        self._torch = torch
        # The constructor prints where it loaded weights from; keep stdout clean for --json.
        with contextlib.redirect_stdout(sys.stderr):
            self._model = module.ConvTransformerSQAModel()
        self._model.eval()
        self._weights = _weights_file()

    @classmethod
    def availability(cls, **opts: JSONValue) -> Availability:
        if not has_module("torch"):
            return Availability(
                False, "torch is not installed (make setup-torch installs the CPU wheel)"
            )
        if not has_module("distillmos"):
            return Availability(
                False, "distillmos is not installed (make setup-torch: pip install --no-deps)"
            )
        if not has_module("xls_r_sqa"):
            return Availability(False, "xls-r-sqa is not installed (pip install 'voxeval[torch]')")
        if _weights_file() is None:
            return Availability(False, "distillmos is installed but its weights/*.pt is missing")
        return Availability(True)

    def identity(self) -> JSONObject:
        ident: dict[str, Any] = {"provider": "mos:distillmos", "model": "distillmos"}
        if self._weights is not None:
            ident["weights"] = self._weights.name
            ident["sha256"] = file_sha256(self._weights)[:16]
        return ident

    def predict(self, audio: Audio) -> MOSResult:
        """DistillMOS of ``audio`` (any rate; resampled to 16 kHz)."""
        if audio.is_empty() or audio.duration < MIN_SECONDS:
            raise AudioError(
                f"{audio.source}: {audio.duration:.2f} s is too short for DistillMOS "
                f"(minimum {MIN_SECONDS} s)"
            )
        samples = np.clip(resample(audio, RATE).samples, -1.0, 1.0)
        with self._torch.no_grad():
            tensor = self._torch.from_numpy(np.ascontiguousarray(samples))[None, :]
            score = float(self._model(tensor).reshape(-1)[0])
        details: dict[str, Any] = {
            "input_seconds": round(audio.duration, 3),
            "input_rate": audio.rate,
        }
        if samples.size < MODEL_WINDOW:
            details["padding"] = f"zero-padded by the model to {MODEL_WINDOW / RATE:.2f} s"
        return MOSResult(overall=score, scores={"mos": score}, model="distillmos", details=details)
