from __future__ import annotations

import numpy as np
import pytest

from voxeval.providers.audio_analysis.dnsmos_features import mel_filterbank, p808_features


def test_features_match_librosa() -> None:
    librosa = pytest.importorskip("librosa")
    x = (np.random.default_rng(0).standard_normal(32000) * 0.1).astype(np.float32)
    ref = librosa.feature.melspectrogram(y=x, sr=16000, n_fft=321, hop_length=160, n_mels=120)
    ref = ((librosa.power_to_db(ref, ref=np.max) + 40) / 40).T
    ours = p808_features(x)
    assert ours.shape == ref.shape == (200, 120)
    assert np.abs(ours - ref).max() < 1e-4
    filters = librosa.filters.mel(sr=16000, n_fft=321, n_mels=120)
    assert np.abs(mel_filterbank() - filters).max() < 1e-6


def test_feature_shape_for_the_dnsmos_window() -> None:
    segment = np.zeros(144160 - 160, dtype=np.float32)
    segment[::100] = 0.5
    assert p808_features(segment).shape == (900, 120)
