"""Speaker transforms: pitch shift, formant (vocal-tract length) shift and tempo change.

These widen a small voice catalogue into a grid of speaker profiles. They are signal-level
approximations, not voice conversion: a male voice shifted up is heard as a higher, shorter
vocal tract, not as a real child or woman. Expect audible phase-vocoder artefacts beyond
about +-6 semitones.

Method: ``librosa.effects.pitch_shift`` (phase-vocoder stretch + resampling) moves pitch *and*
spectral envelope by the same factor; a cepstral envelope warp then moves the envelope to
the requested formant factor independently of pitch; ``librosa.effects.time_stretch`` changes
tempo without changing pitch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from voxeval.audio import Audio, resample
from voxeval.errors import ConfigError, ProviderUnavailable

N_FFT = 1024
HOP = 256
# Envelope smoothing: keep cepstral coefficients below 1.5 ms quefrency, which excludes the
# harmonic peak of voices up to ~600 Hz f0 while keeping formant structure.
LIFTER_SECONDS = 0.0015


@dataclass(frozen=True, order=True)
class SpeakerTransform:
    """``pitch_semitones`` shifts f0; ``formant_ratio`` scales formant frequencies (>1 = shorter
    vocal tract: younger/more female); ``tempo`` > 1 speaks faster, < 1 slower."""

    pitch_semitones: float = 0.0
    formant_ratio: float = 1.0
    tempo: float = 1.0

    def __post_init__(self) -> None:
        if not -12.0 <= self.pitch_semitones <= 12.0:
            raise ConfigError(f"pitch_semitones must be in [-12, 12], got {self.pitch_semitones}")
        if not 0.7 <= self.formant_ratio <= 1.4:
            raise ConfigError(f"formant_ratio must be in [0.7, 1.4], got {self.formant_ratio}")
        if not 0.5 <= self.tempo <= 2.0:
            raise ConfigError(f"tempo must be in [0.5, 2.0], got {self.tempo}")

    @property
    def is_identity(self) -> bool:
        return self.pitch_semitones == 0.0 and self.formant_ratio == 1.0 and self.tempo == 1.0

    def describe(self) -> str:
        if self.is_identity:
            return "none"
        parts = []
        if self.pitch_semitones:
            parts.append(f"pitch {self.pitch_semitones:+.1f} st")
        if self.formant_ratio != 1.0:
            parts.append(f"formants x{self.formant_ratio:.2f}")
        if self.tempo != 1.0:
            parts.append(f"tempo x{self.tempo:.2f}")
        return ", ".join(parts)

    def apply(self, audio: Audio, *, varispeed_pitch: bool = False) -> Audio:
        return apply_transform(audio, self, varispeed_pitch=varispeed_pitch)


IDENTITY = SpeakerTransform()


def _librosa() -> ModuleType:
    try:
        import librosa
    except ImportError as exc:
        raise ProviderUnavailable(
            "speaker transforms need librosa (pip install 'voxeval[embedded]')"
        ) from exc
    return librosa


def _warp_envelope(samples: np.ndarray, rate: int, factor: float) -> np.ndarray:
    """Scale the spectral envelope's frequency axis by ``factor``, keeping the harmonics."""
    librosa = _librosa()

    spec = librosa.stft(samples, n_fft=N_FFT, hop_length=HOP)
    mag, phase = np.abs(spec), np.angle(spec)
    log_mag = np.log(mag + 1e-8)
    cep = np.fft.irfft(log_mag, n=N_FFT, axis=0)
    cut = max(8, int(LIFTER_SECONDS * rate))
    cep[cut : N_FFT - cut + 1] = 0.0
    envelope = np.fft.rfft(cep, n=N_FFT, axis=0).real  # log envelope per frame
    bins = np.arange(envelope.shape[0], dtype=np.float64)
    # New envelope at bin k is the old envelope at k / factor (formants move up when > 1).
    source_bins = np.clip(bins / factor, 0, envelope.shape[0] - 1)
    warped = np.empty_like(envelope)
    for frame in range(envelope.shape[1]):
        warped[:, frame] = np.interp(source_bins, bins, envelope[:, frame])
    new_mag = np.exp(log_mag - envelope + warped)
    out = librosa.istft(new_mag * np.exp(1j * phase), hop_length=HOP, length=samples.size)
    return np.asarray(out, dtype=np.float32)


def varispeed(audio: Audio, factor: float) -> Audio:
    """``audio`` played ``factor`` times faster (pitch, formants and speed together), by
    resampling: no phase-vocoder artefacts."""
    played = Audio(audio.samples, round(audio.rate * factor), source=audio.source)
    return resample(played, audio.rate)


def apply_transform(
    audio: Audio, transform: SpeakerTransform, *, varispeed_pitch: bool = False
) -> Audio:
    """Return ``audio`` with the transform applied (same rate; peak level preserved).

    ``varispeed_pitch`` moves the pitch by resampling instead of the phase vocoder: cleaner
    (DNSMOS OVRL of a Piper sentence 3.49 unshifted, 2.77 after a +1.4 semitone phase-vocoder
    shift), but the audio also gets shorter by the pitch factor, so the caller synthesizes it
    that much slower (an engine's own rate control, see ``benchmarks.build``)."""
    if transform.is_identity or audio.is_empty():
        return audio
    librosa = _librosa()

    y = np.asarray(audio.samples, dtype=np.float32)
    peak = float(np.max(np.abs(y))) or 1.0
    pitch_factor = 2.0 ** (transform.pitch_semitones / 12.0)
    if transform.pitch_semitones and varispeed_pitch:
        y = varispeed(Audio(y, audio.rate), pitch_factor).samples
    elif transform.pitch_semitones:
        y = librosa.effects.pitch_shift(y, sr=audio.rate, n_steps=transform.pitch_semitones)
    residual = transform.formant_ratio / pitch_factor
    if not math.isclose(residual, 1.0, abs_tol=1e-3):
        y = _warp_envelope(y, audio.rate, residual)
    if transform.tempo != 1.0:
        y = librosa.effects.time_stretch(y, rate=transform.tempo)
    new_peak = float(np.max(np.abs(y))) or 1.0
    y = y * (peak / new_peak)
    return Audio(np.asarray(y, dtype=np.float32), audio.rate, source=audio.source)
