"""Signal levels: RMS, peak, gain, and ITU-R BS.1770 loudness (K-weighted, gated LUFS).

Levels are in dBFS relative to a full-scale amplitude of 1.0, so a full-scale sine has an
RMS level of -3.01 dBFS and a loudness of -3.01 LUFS.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import signal

from voxeval.audio.checks import require_finite, require_samples
from voxeval.audio.value import Audio
from voxeval.errors import AudioError

# Levels below this are treated as digital silence (about 16-bit quantisation noise).
SILENCE_DB = -100.0

# BS.1770 gating: 400 ms blocks, 75 % overlap, absolute gate -70 LUFS, relative gate -10 LU.
_BLOCK_S = 0.4
_STEP_S = 0.1
_ABSOLUTE_GATE_LUFS = -70.0
_RELATIVE_GATE_LU = -10.0


def rms(audio: Audio) -> float:
    """Root mean square of the samples (linear)."""
    require_samples(audio, "rms")
    return float(np.sqrt(np.mean(np.square(audio.samples, dtype=np.float64))))


def rms_db(audio: Audio) -> float:
    """RMS level in dBFS; ``-inf`` for digital silence."""
    value = rms(audio)
    return 20.0 * math.log10(value) if value > 0 else -math.inf


def peak(audio: Audio) -> float:
    """Largest absolute sample value."""
    require_samples(audio, "peak")
    return float(np.max(np.abs(audio.samples)))


def peak_db(audio: Audio) -> float:
    """Peak level in dBFS; ``-inf`` for digital silence."""
    value = peak(audio)
    return 20.0 * math.log10(value) if value > 0 else -math.inf


def db_to_amplitude(db: float) -> float:
    return float(10.0 ** (db / 20.0))


def gain_db(audio: Audio, db: float) -> Audio:
    """``audio`` scaled by ``db`` decibels (no clipping is applied)."""
    db = require_finite(db, "gain_db", audio.source)
    return audio.with_samples(audio.samples.astype(np.float64) * db_to_amplitude(db))


# The most a normalisation boosts a quiet input. Near-silent input (a dead microphone, a
# wrong channel) would otherwise come out as loud amplified noise (+76 dB for a 16-bit noise
# floor); with the cap it stays quiet, and ``LevelFit.capped`` lets callers flag it.
MAX_GAIN_DB = 30.0


@dataclass(frozen=True)
class LevelFit:
    """The result of a normalisation: the scaled audio and what was measured and applied.
    ``capped`` means the input was too quiet to reach the target within ``max_gain_db``."""

    audio: Audio
    input_db: float
    gain_db: float
    wanted_gain_db: float

    @property
    def capped(self) -> bool:
        return self.gain_db < self.wanted_gain_db

    def details(self) -> dict[str, float | bool]:
        return {
            "input_level_db": round(self.input_db, 2),
            "gain_db": round(self.gain_db, 2),
            "wanted_gain_db": round(self.wanted_gain_db, 2),
            "near_silent": self.capped,
        }


def _require_audible(level_db: float, audio: Audio, what: str) -> None:
    if level_db <= SILENCE_DB:
        raise AudioError(f"{audio.source}: cannot {what}: the audio is silent ({level_db} dB)")


def _fit(audio: Audio, level: float, target: float, max_gain_db: float | None) -> LevelFit:
    wanted = target - level
    limit = (
        math.inf
        if max_gain_db is None
        else require_finite(max_gain_db, "max_gain_db", audio.source)
    )
    applied = min(wanted, limit)
    return LevelFit(gain_db(audio, applied), level, applied, wanted)


def _fit_measured(
    audio: Audio,
    measure: Callable[[Audio], float],
    target_dbfs: float,
    max_gain_db: float | None,
    action: str,
) -> LevelFit:
    """Measure ``audio``'s level (it must be audible) and scale it towards ``target_dbfs``."""
    target = require_finite(target_dbfs, "target_dbfs", audio.source)
    level = measure(audio)
    _require_audible(level, audio, action)
    return _fit(audio, level, target, max_gain_db)


def fit_rms(
    audio: Audio, target_dbfs: float = -20.0, *, max_gain_db: float | None = MAX_GAIN_DB
) -> LevelFit:
    """Scale ``audio`` towards an RMS level of ``target_dbfs``, boosting by at most
    ``max_gain_db`` (None: no cap)."""
    return _fit_measured(audio, rms_db, target_dbfs, max_gain_db, "normalise RMS")


def normalise_rms(
    audio: Audio, target_dbfs: float = -20.0, *, max_gain_db: float | None = MAX_GAIN_DB
) -> Audio:
    """Scale ``audio`` so its RMS level is ``target_dbfs`` (boost capped, see ``fit_rms``)."""
    return fit_rms(audio, target_dbfs, max_gain_db=max_gain_db).audio


def fit_peak(
    audio: Audio, target_dbfs: float = -1.0, *, max_gain_db: float | None = MAX_GAIN_DB
) -> LevelFit:
    """Scale ``audio`` towards a peak of ``target_dbfs``, boosting by at most ``max_gain_db``."""
    return _fit_measured(audio, peak_db, target_dbfs, max_gain_db, "normalise peak")


def normalise_peak(
    audio: Audio, target_dbfs: float = -1.0, *, max_gain_db: float | None = MAX_GAIN_DB
) -> Audio:
    """Scale ``audio`` so its peak is ``target_dbfs`` (boost capped, see ``fit_peak``)."""
    return fit_peak(audio, target_dbfs, max_gain_db=max_gain_db).audio


# BS.1770-4 K-weighting biquads as published for 48 kHz: (b, a) of the high shelf (about
# +4 dB above 2 kHz, modelling the head) and of the 38 Hz high pass (RLB weighting).
_K_48K = (
    (
        (1.53512485958697, -2.69169618940638, 1.19839281085285),
        (1.0, -1.69065929318241, 0.73248077421585),
    ),
    ((1.0, -2.0, 1.0), (1.0, -1.99004745483398, 0.99007225036621)),
)
_STANDARD_RATE = 48000


def _analogue(coeffs: tuple[float, float, float], rate: int) -> list[float]:
    """s-domain polynomial of a digital biquad (inverse bilinear transform at ``rate``)."""
    c0, c1, c2 = coeffs
    k = 2.0 * rate
    return [c0 - c1 + c2, 2 * k * (c0 - c2), k * k * (c0 + c1 + c2)]


def _k_weighting_sos(rate: int) -> npt.NDArray[np.float64]:
    """BS.1770 K-weighting at ``rate`` as second-order sections.

    The standard publishes coefficients for 48 kHz only; for other rates each biquad is
    mapped back to its analogue prototype and re-discretised with the bilinear transform.
    """
    sections = []
    for b, a in _K_48K:
        if rate == _STANDARD_RATE:
            bz, az = np.asarray(b), np.asarray(a)
        else:
            bz, az = signal.bilinear(
                _analogue(b, _STANDARD_RATE), _analogue(a, _STANDARD_RATE), fs=rate
            )
        sections.append([*(bz / az[0]), *(az / az[0])])
    return np.asarray(sections, dtype=np.float64)


def loudness_lufs(audio: Audio) -> float:
    """Integrated loudness (LUFS) per ITU-R BS.1770-4 for one channel.

    Audio shorter than one 400 ms gating block is measured as a single block. Returns
    ``-inf`` when every block is below the absolute gate (-70 LUFS).
    """
    require_samples(audio, "loudness")
    weighted = signal.sosfilt(_k_weighting_sos(audio.rate), audio.samples.astype(np.float64))
    block = round(_BLOCK_S * audio.rate)
    step = round(_STEP_S * audio.rate)
    if weighted.size <= block:
        powers = np.array([np.mean(np.square(weighted))])
    else:
        starts = np.arange(0, weighted.size - block + 1, step)
        squares = np.concatenate([[0.0], np.cumsum(np.square(weighted))])
        powers = (squares[starts + block] - squares[starts]) / block
    with np.errstate(divide="ignore"):
        block_lufs = -0.691 + 10 * np.log10(powers)
    kept = powers[block_lufs > _ABSOLUTE_GATE_LUFS]
    if kept.size == 0:
        return -math.inf
    relative_gate = -0.691 + 10 * math.log10(float(np.mean(kept))) + _RELATIVE_GATE_LU
    with np.errstate(divide="ignore"):
        kept_lufs = -0.691 + 10 * np.log10(kept)
    gated = kept[kept_lufs > relative_gate]
    return -0.691 + 10 * math.log10(float(np.mean(gated)))


def fit_loudness(
    audio: Audio, target_lufs: float = -23.0, *, max_gain_db: float | None = MAX_GAIN_DB
) -> LevelFit:
    """Scale ``audio`` towards an integrated loudness of ``target_lufs``, boosting by at most
    ``max_gain_db``."""
    target = require_finite(target_lufs, "target_lufs", audio.source)
    level = loudness_lufs(audio)
    if not math.isfinite(level):
        raise AudioError(f"{audio.source}: cannot normalise loudness: below the -70 LUFS gate")
    return _fit(audio, level, target, max_gain_db)


def normalise_loudness(
    audio: Audio, target_lufs: float = -23.0, *, max_gain_db: float | None = MAX_GAIN_DB
) -> Audio:
    """Scale ``audio`` so its integrated loudness is ``target_lufs`` (EBU R128 uses -23);
    the boost is capped (see ``fit_loudness``)."""
    return fit_loudness(audio, target_lufs, max_gain_db=max_gain_db).audio
