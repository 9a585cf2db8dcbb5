"""Log-mel features for the DNSMOS P.808 model, computed with numpy.

They reproduce ``librosa.feature.melspectrogram(n_fft=321, hop_length=160, n_mels=120)``
followed by ``(power_to_db(ref=max) + 40) / 40``, the input the P.808 model was trained on,
without importing librosa (whose first call costs seconds of JIT compilation).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import numpy.typing as npt
from scipy.signal import get_window

RATE = 16000
N_FFT = 321
HOP = 160
N_MELS = 120

# Slaney mel scale: linear below 1 kHz, logarithmic above.
_F_SP = 200.0 / 3
_MIN_LOG_HZ = 1000.0
_MIN_LOG_MEL = _MIN_LOG_HZ / _F_SP
_LOGSTEP = math.log(6.4) / 27.0


def _hz_to_mel(hz: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    mel = hz / _F_SP
    log_part = hz >= _MIN_LOG_HZ
    mel[log_part] = _MIN_LOG_MEL + np.log(hz[log_part] / _MIN_LOG_HZ) / _LOGSTEP
    return mel


def _mel_to_hz(mel: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    hz = mel * _F_SP
    log_part = mel >= _MIN_LOG_MEL
    hz[log_part] = _MIN_LOG_HZ * np.exp(_LOGSTEP * (mel[log_part] - _MIN_LOG_MEL))
    return hz


@functools.cache
def mel_filterbank() -> npt.NDArray[np.float32]:
    """(N_MELS, N_FFT // 2 + 1) triangular filters with Slaney area normalisation."""
    fft_freqs = np.fft.rfftfreq(N_FFT, 1.0 / RATE)
    edges = _hz_to_mel(np.array([0.0, RATE / 2.0]))
    mel_freqs = _mel_to_hz(np.linspace(edges[0], edges[1], N_MELS + 2))
    widths = np.diff(mel_freqs)
    ramps = mel_freqs[:, None] - fft_freqs[None, :]
    lower = -ramps[:-2] / widths[:-1, None]
    upper = ramps[2:] / widths[1:, None]
    weights = np.maximum(0.0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_freqs[2 : N_MELS + 2] - mel_freqs[:N_MELS]))[:, None]
    return weights.astype(np.float32)


@functools.cache
def _window() -> npt.NDArray[np.float32]:
    return np.asarray(get_window("hann", N_FFT, fftbins=True), dtype=np.float32)


def p808_features(segment: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """(frames, N_MELS) scaled log-mel power of ``segment`` (16 kHz samples)."""
    padded = np.pad(segment.astype(np.float32), N_FFT // 2)
    n_frames = 1 + (padded.size - N_FFT) // HOP
    idx = np.arange(N_FFT)[None, :] + HOP * np.arange(n_frames)[:, None]
    spectrum = np.fft.rfft(padded[idx] * _window(), axis=1)
    power = (spectrum.real**2 + spectrum.imag**2).astype(np.float32)
    mel = power @ mel_filterbank().T
    amin = 1e-10
    log_mel = 10.0 * np.log10(np.maximum(amin, mel))
    log_mel -= 10.0 * np.log10(max(amin, float(mel.max())))
    log_mel = np.maximum(log_mel, log_mel.max() - 80.0)
    return ((log_mel + 40.0) / 40.0).astype(np.float32)
