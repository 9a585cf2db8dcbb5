"""Connection degradations for simulated phone calls (all seeded and deterministic).

* ``mulaw_roundtrip``: resample to 8 kHz, 8-bit mu-law (mu = 255) encode and decode with the
  continuous companding law, resample back to the original rate.
* ``packet_loss``: each 20 ms frame is lost independently with probability ``rate``; a lost
  frame is replaced by silence (no concealment).
* ``gain_fluctuation``: a random gain drawn uniformly in [low, high] for every segment, with
  linear ramps between segment centres so the level drifts instead of jumping.
* ``telephone_band``: 300-3400 Hz Butterworth band pass (causal, like a real line).
* ``degrade_connection``: the EVA-Bench chain: mu-law round trip, then 3 % packet loss on
  20 ms frames, then gain fluctuation 0.5-1.2.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from scipy import signal

from voxeval.audio.checks import at_rate, require_range, require_samples
from voxeval.audio.value import Audio
from voxeval.errors import AudioError

MU = 255
CODEC_RATE = 8000


def mulaw_encode(samples: npt.ArrayLike, mu: int = MU) -> npt.NDArray[np.uint8]:
    """Compand samples in [-1, 1] with the mu-law and quantise to 8-bit codes (0..255)."""
    x = np.clip(np.asarray(samples, dtype=np.float64), -1.0, 1.0)
    companded = np.sign(x) * np.log1p(mu * np.abs(x)) / math.log1p(mu)
    return np.round((companded + 1.0) / 2.0 * mu).astype(np.uint8)


def mulaw_decode(codes: npt.ArrayLike, mu: int = MU) -> npt.NDArray[np.float32]:
    """Invert ``mulaw_encode``: 8-bit codes back to samples in [-1, 1]."""
    y = np.asarray(codes, dtype=np.float64) / mu * 2.0 - 1.0
    return (np.sign(y) * np.expm1(np.abs(y) * math.log1p(mu)) / mu).astype(np.float32)


def mulaw_roundtrip(audio: Audio, *, codec_rate: int = CODEC_RATE) -> Audio:
    """``audio`` as heard through an 8 kHz mu-law channel, at its original rate."""
    require_samples(audio, "mulaw_roundtrip")
    narrow = at_rate(audio, codec_rate)
    decoded = narrow.with_samples(mulaw_decode(mulaw_encode(narrow.samples)))
    return at_rate(decoded, audio.rate)


def lost_frames(
    audio: Audio, rate: float = 0.03, *, frame_ms: float = 20.0, seed: int | None = 0
) -> npt.NDArray[np.int64]:
    """Indices of the ``frame_ms`` frames that ``packet_loss`` drops (Bernoulli per frame)."""
    where = audio.source
    loss = require_range(rate, "packet loss rate", where, 0.0, 1.0)
    frame = _frame_samples(audio, frame_ms)
    n_frames = math.ceil(audio.num_samples / frame)
    draws = np.random.default_rng(seed).random(n_frames)
    return np.flatnonzero(draws < loss).astype(np.int64)


def _frame_samples(audio: Audio, frame_ms: float) -> int:
    ms = require_range(frame_ms, "frame_ms", audio.source, 1.0, 1000.0)
    return max(1, round(ms / 1000.0 * audio.rate))


def packet_loss(
    audio: Audio, rate: float = 0.03, *, frame_ms: float = 20.0, seed: int | None = 0
) -> Audio:
    """``audio`` with the frames chosen by ``lost_frames`` replaced by silence."""
    require_samples(audio, "packet_loss")
    frame = _frame_samples(audio, frame_ms)
    out = np.array(audio.samples, copy=True)
    for index in lost_frames(audio, rate, frame_ms=frame_ms, seed=seed):
        out[index * frame : (index + 1) * frame] = 0.0
    return audio.with_samples(out)


def gain_curve(
    audio: Audio,
    low: float = 0.5,
    high: float = 1.2,
    *,
    segment_s: float = 1.0,
    seed: int | None = 0,
) -> npt.NDArray[np.float64]:
    """Per-sample gains used by ``gain_fluctuation`` (always within [low, high])."""
    where = audio.source
    lo = require_range(low, "low gain", where, 0.0, 100.0)
    hi = require_range(high, "high gain", where, lo, 100.0)
    seg = require_range(segment_s, "segment_s", where, 0.01, 3600.0)
    seg_len = max(1, round(seg * audio.rate))
    n_segments = math.ceil(audio.num_samples / seg_len)
    gains = np.random.default_rng(seed).uniform(lo, hi, size=n_segments)
    if n_segments == 1:
        return np.full(audio.num_samples, gains[0])
    centres = (np.arange(n_segments) + 0.5) * seg_len
    return np.interp(np.arange(audio.num_samples), centres, gains)


def gain_fluctuation(
    audio: Audio,
    low: float = 0.5,
    high: float = 1.2,
    *,
    segment_s: float = 1.0,
    seed: int | None = 0,
) -> Audio:
    """``audio`` times a slowly varying random gain in [low, high] (see ``gain_curve``)."""
    require_samples(audio, "gain_fluctuation")
    curve = gain_curve(audio, low, high, segment_s=segment_s, seed=seed)
    return audio.with_samples(audio.samples * curve)


def telephone_band(
    audio: Audio, low_hz: float = 300.0, high_hz: float = 3400.0, *, order: int = 4
) -> Audio:
    """Band-limit to ``low_hz``-``high_hz`` with a causal Butterworth band pass."""
    require_samples(audio, "telephone_band")
    nyquist = audio.rate / 2
    lo = require_range(low_hz, "low_hz", audio.source, 1.0, nyquist)
    hi = require_range(high_hz, "high_hz", audio.source, lo, math.inf)
    if hi >= nyquist:
        raise AudioError(
            f"{audio.source}: telephone_band upper edge {hi} Hz needs a sample rate above "
            f"{2 * hi:.0f} Hz, audio is {audio.rate} Hz"
        )
    sos = signal.butter(order, [lo, hi], btype="bandpass", fs=audio.rate, output="sos")
    return audio.with_samples(signal.sosfilt(sos, audio.samples.astype(np.float64)))


def degrade_connection(
    audio: Audio,
    *,
    seed: int = 0,
    loss_rate: float = 0.03,
    frame_ms: float = 20.0,
    gain_low: float = 0.5,
    gain_high: float = 1.2,
) -> Audio:
    """The EVA-Bench connection degradation: mu-law round trip, packet loss, gain drift.

    Packet loss and gain use independent streams derived from ``seed``.
    """
    loss_seed, gain_seed = np.random.SeedSequence(seed).generate_state(2)
    coded = mulaw_roundtrip(audio)
    lossy = packet_loss(coded, loss_rate, frame_ms=frame_ms, seed=int(loss_seed))
    return gain_fluctuation(lossy, gain_low, gain_high, seed=int(gain_seed))
