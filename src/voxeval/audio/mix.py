"""Mixing: noise at a target SNR or amplitude ratio, overlays, concatenation, babble and
track sums.

Definitions (see docs/audio.md):

* SNR is measured on whole signals: ``10 log10(mean(speech^2) / mean(noise^2))`` where the
  noise is the segment actually added (after fitting it to the speech length). No VAD or
  band weighting is applied, so silence inside the speech lowers its power.
* The amplitude ratio ``noise_amplitude : speech_amplitude`` (WildSpeech uses 0.5 : 1.0)
  applies after the noise has been brought to the speech's level (its RMS by default, or its
  peak), so 0.5 : 1.0 is an SNR of 20 log10(1.0 / 0.5) = 6.02 dB with the RMS reference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, TypeVar

import numpy as np
import numpy.typing as npt

from voxeval.audio.checks import at_rate, require_finite, require_range, require_samples
from voxeval.audio.levels import SILENCE_DB, peak, peak_db, rms, rms_db
from voxeval.audio.value import Audio
from voxeval.errors import AudioError

Seed = int | np.random.Generator | None

# A mix louder than full scale is scaled down as a whole to this peak (keeps the SNR).
HEADROOM_PEAK = 0.99
# Level babble voices are set to before and after summing.
BABBLE_RMS_DBFS = -25.0


def fit_to_length(noise: Audio, num_samples: int, *, loop: bool = True, seed: Seed = None) -> Audio:
    """``noise`` cut or extended to exactly ``num_samples`` samples.

    Longer noise: a window starting at a random offset (offset 0 when ``seed`` is None).
    Shorter noise: repeated end to end from a random offset when ``loop``; otherwise padded
    with silence at the end.
    """
    require_samples(noise, "fit_to_length")
    if num_samples < 0:
        raise AudioError(f"{noise.source}: fit_to_length needs num_samples >= 0, got {num_samples}")
    data = noise.samples
    rng = np.random.default_rng(seed) if seed is not None else None
    size = data.size
    if size >= num_samples:
        start = int(rng.integers(0, size - num_samples + 1)) if rng is not None else 0
        return noise.with_samples(data[start : start + num_samples])
    if not loop:
        return noise.with_samples(np.pad(data, (0, num_samples - size)))
    start = int(rng.integers(0, size)) if rng is not None else 0
    reps = math.ceil((num_samples + start) / size)
    return noise.with_samples(np.tile(data, reps)[start : start + num_samples])


FloatArray = TypeVar("FloatArray", npt.NDArray[np.float32], npt.NDArray[np.float64])


def limit_peak(samples: FloatArray, above: float = 1.0) -> FloatArray:
    """``samples`` scaled as a whole to a peak of ``HEADROOM_PEAK`` when their peak is over
    ``above`` (full scale by default); unchanged otherwise."""
    top = float(np.max(np.abs(samples))) if samples.size else 0.0
    if top > above:
        return samples * (HEADROOM_PEAK / top)
    return samples


def _headroom(mixed: FloatArray, avoid_clipping: bool) -> FloatArray:
    return limit_peak(mixed) if avoid_clipping else mixed


def mix_tracks(tracks: Sequence[Audio], *, source: str = "<mix>") -> Audio:
    """The sample-wise sum of ``tracks`` at the first track's rate (shorter tracks padded with
    silence at the end). If the sum exceeds full scale anywhere, the whole sum is scaled so
    its peak is ``HEADROOM_PEAK``: the mix never clips and the parties keep their relative
    levels. A sum within full scale is left as it is; the tracks themselves are not changed."""
    if not tracks:
        raise AudioError(f"{source}: mix_tracks: no tracks given")
    rate = tracks[0].rate
    parts = [at_rate(t, rate).samples for t in tracks]
    # float32 throughout: a call's tracks run to minutes, and the sum needs no more precision
    total = np.zeros(max(p.size for p in parts), dtype=np.float32)
    for part in parts:
        total[: part.size] += part
    return Audio(_headroom(total, avoid_clipping=True), rate, source=source)


def _fitted_noise(speech: Audio, noise: Audio, seed: Seed, operation: str) -> Audio:
    require_samples(speech, operation)
    require_samples(noise, operation)
    fitted = fit_to_length(at_rate(noise, speech.rate), speech.num_samples, seed=seed)
    if rms_db(fitted) <= SILENCE_DB:
        raise AudioError(f"{noise.source}: {operation}: the noise is silent")
    if rms_db(speech) <= SILENCE_DB:
        raise AudioError(f"{speech.source}: {operation}: the speech is silent")
    return fitted


def noise_at_snr(speech: Audio, noise: Audio, snr_db: float, *, seed: Seed = None) -> Audio:
    """The noise that ``mix_at_snr`` adds: resampled to the speech's rate, fitted to its
    length (``fit_to_length`` with ``seed``) and scaled to give ``snr_db``."""
    snr = require_finite(snr_db, "snr_db", speech.source)
    fitted = _fitted_noise(speech, noise, seed, "mix_at_snr")
    scale = rms(speech) / (rms(fitted) * 10 ** (snr / 20.0))
    return fitted.with_samples(fitted.samples.astype(np.float64) * scale)


def mix_at_snr(
    speech: Audio,
    noise: Audio,
    snr_db: float,
    *,
    seed: Seed = None,
    avoid_clipping: bool = True,
) -> Audio:
    """``speech`` plus ``noise`` scaled so the whole-signal SNR is ``snr_db`` dB.

    The speech keeps its level; if the sum would exceed full scale and ``avoid_clipping``
    is set, the sum is scaled down as a whole (the SNR is unchanged).
    """
    scaled = noise_at_snr(speech, noise, snr_db, seed=seed)
    mixed = speech.samples.astype(np.float64) + scaled.samples.astype(np.float64)
    return speech.with_samples(_headroom(mixed, avoid_clipping))


def ratio_to_snr_db(noise_amplitude: float, speech_amplitude: float = 1.0) -> float:
    """SNR (dB) of an RMS-referenced amplitude ratio: ``20 log10(speech / noise)``."""
    return 20.0 * math.log10(speech_amplitude / noise_amplitude)


def mix_at_ratio(
    speech: Audio,
    noise: Audio,
    noise_amplitude: float = 0.5,
    speech_amplitude: float = 1.0,
    *,
    reference: Literal["rms", "peak"] = "rms",
    seed: Seed = None,
    avoid_clipping: bool = True,
) -> Audio:
    """Mix at an amplitude ratio (WildSpeech: noise 0.5 vs speech 1.0).

    The fitted noise is first scaled to the speech's level (RMS, or peak with
    ``reference="peak"``); then ``speech_amplitude * speech + noise_amplitude * noise``.
    With the RMS reference the result has SNR ``ratio_to_snr_db(noise_amp, speech_amp)``.
    """
    where = speech.source
    noise_amp = require_range(noise_amplitude, "noise_amplitude", where, 0.0, 100.0)
    speech_amp = require_range(speech_amplitude, "speech_amplitude", where, 1e-6, 100.0)
    if reference not in ("rms", "peak"):
        raise AudioError(
            f"{where}: mix_at_ratio reference must be 'rms' or 'peak', not {reference!r}"
        )
    fitted = _fitted_noise(speech, noise, seed, "mix_at_ratio")
    if reference == "rms":
        match = rms(speech) / rms(fitted)
    else:
        if peak_db(fitted) <= SILENCE_DB:
            raise AudioError(f"{noise.source}: mix_at_ratio: the noise is silent")
        match = peak(speech) / peak(fitted)
    mixed = speech_amp * speech.samples.astype(np.float64) + noise_amp * match * fitted.samples
    return speech.with_samples(_headroom(mixed, avoid_clipping))


def overlay(
    base: Audio, event: Audio, at_s: float, gain: float = 1.0, *, extend: bool = False
) -> Audio:
    """``base`` with ``event`` (times ``gain``) added starting ``at_s`` seconds in.

    The event is resampled to the base's rate. An event running past the end is cut off,
    unless ``extend`` lengthens the base with silence to hold it.
    """
    where = base.source
    start_s = require_range(at_s, "at_s", where, 0.0, math.inf if extend else base.duration)
    amp = require_finite(gain, "gain", where)
    require_samples(event, "overlay")
    ev = at_rate(event, base.rate).samples.astype(np.float64) * amp
    start = round(start_s * base.rate)
    out = base.samples.astype(np.float64)
    end = start + ev.size
    if extend and end > out.size:
        out = np.pad(out, (0, end - out.size))
    stop = min(end, out.size)
    out[start:stop] += ev[: stop - start]
    return base.with_samples(out)


def concatenate(
    parts: Sequence[Audio], silence_s: float = 0.0, *, rate: int | None = None
) -> Audio:
    """Join ``parts`` with ``silence_s`` seconds of silence between neighbours.

    Every part is resampled to ``rate`` (default: the first part's rate).
    """
    if not parts:
        raise AudioError("concatenate: no audio parts given")
    gap = require_range(silence_s, "silence_s", parts[0].source, 0.0, 3600.0)
    target = int(rate or parts[0].rate)
    silence = np.zeros(round(gap * target), dtype=np.float32)
    pieces: list[npt.NDArray[np.float32]] = []
    for i, part in enumerate(parts):
        if i:
            pieces.append(silence)
        pieces.append(at_rate(part, target).samples)
    return Audio(np.concatenate(pieces), target, source=parts[0].source)


def babble(
    clips: Sequence[Audio],
    n: int = 3,
    *,
    seed: Seed = None,
    duration_s: float | None = None,
    rate: int | None = None,
) -> Audio:
    """Background speech: ``n`` distinct clips drawn at random, levelled, looped and summed.

    Each chosen clip is set to the same RMS, fitted to ``duration_s`` (default: the longest
    chosen clip) from a random offset, and the sum is set to ``BABBLE_RMS_DBFS``.
    """
    if n < 1:
        raise AudioError(f"babble: n must be at least 1, got {n}")
    if len(clips) < n:
        raise AudioError(f"babble: needs at least {n} clips, got {len(clips)}")
    rng = np.random.default_rng(seed)
    chosen = [clips[int(i)] for i in rng.choice(len(clips), size=n, replace=False)]
    target = int(rate or chosen[0].rate)
    voices = [at_rate(c, target) for c in chosen]
    for voice in voices:
        require_samples(voice, "babble")
        if rms_db(voice) <= SILENCE_DB:
            raise AudioError(f"{voice.source}: babble: the clip is silent")
    if duration_s is None:
        length = max(v.num_samples for v in voices)
    else:
        length = round(require_range(duration_s, "duration_s", "babble", 1e-3, 4 * 3600) * target)
    total = np.zeros(length, dtype=np.float64)
    level = 10 ** (BABBLE_RMS_DBFS / 20.0)
    for voice in voices:
        fitted = fit_to_length(voice, length, seed=rng)
        total += fitted.samples * (level / rms(voice))
    total_rms = float(np.sqrt(np.mean(np.square(total))))
    if total_rms == 0.0:
        raise AudioError("babble: the chosen clips cancel out to silence")
    total *= level / total_rms
    names = "+".join(v.source for v in voices)
    return Audio(total.astype(np.float32), target, source=f"babble({names})")
