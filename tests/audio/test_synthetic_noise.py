"""Synthetic noise: every named texture and environment matches its golden summary.

The golden file was written by the code before the two noise sets shared one library
(benchmarks/noise_generators.py and simulation/noise_environments.py); a change to any
filter, noise colour or envelope moves these statistics. Statistics with a tight tolerance
rather than byte hashes, because vectorised sin/exp may differ in the last bit across CPUs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxeval.audio import Audio
from voxeval.audio.noise_environments import ENVIRONMENTS, environment_noise
from voxeval.audio.sound_textures import SOUND_TEXTURES, render_texture
from voxeval.audio.synthetic_noise import coloured_noise, event_bumps, lowpass

GOLDEN: dict[str, dict[str, Any]] = json.loads(
    (Path(__file__).with_name("synthetic_noise_golden.json")).read_text()
)


def _assert_matches(audio: Audio, expected: dict[str, Any]) -> None:
    x = audio.samples.astype(np.float64)
    assert (x.size, audio.rate, audio.source) == (
        expected["n"],
        expected["rate"],
        expected["source"],
    )
    assert float(x.sum()) == pytest.approx(expected["sum"], rel=1e-6, abs=1e-6)
    assert float((x * x).sum()) == pytest.approx(expected["sum_sq"], rel=1e-6)
    assert float(np.abs(np.diff(x)).sum()) == pytest.approx(expected["abs_diff"], rel=1e-6)
    picks = [float(x[i]) for i in (x.size // 7, x.size // 3, x.size // 2, x.size - 1)]
    assert picks == pytest.approx(expected["at"], rel=1e-5, abs=1e-7)


def test_golden_covers_every_named_noise() -> None:
    assert {key.split()[0] for key in GOLDEN["textures"]} == set(SOUND_TEXTURES)
    assert {key.split()[0] for key in GOLDEN["environments"]} == set(ENVIRONMENTS)


@pytest.mark.parametrize("key", sorted(GOLDEN["textures"]))
def test_texture_matches_golden(key: str) -> None:
    name, seed, duration, rate = key.split()
    audio = render_texture(name, int(seed), float(duration), int(rate))
    _assert_matches(audio, GOLDEN["textures"][key])


@pytest.mark.parametrize("key", sorted(GOLDEN["environments"]))
def test_environment_matches_golden(key: str) -> None:
    name, seed, duration, rate = key.split()
    audio = environment_noise(name, float(duration), rate=int(rate), seed=int(seed))
    _assert_matches(audio, GOLDEN["environments"][key])


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(2, 4000),
    exponent=st.floats(0.0, 2.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_coloured_noise_has_unit_rms(n: int, exponent: float, seed: int) -> None:
    x = coloured_noise(np.random.default_rng(seed), n, exponent)
    assert x.shape == (n,)
    assert float(np.sqrt(np.mean(x**2))) == pytest.approx(1.0, rel=1e-6)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(100, 20000), seed=st.integers(0, 2**32 - 1))
def test_event_bumps_place_at_least_one_bump(n: int, seed: int) -> None:
    env = event_bumps(np.random.default_rng(seed), n, 8000, per_s=0.0, length_s=0.01)
    assert env.max() > 0.0 and env.min() >= 0.0


def test_lowpass_removes_content_above_cutoff() -> None:
    rate = 16000
    t = np.arange(rate) / rate
    high = np.sin(2 * np.pi * 6000 * t)
    low = np.sin(2 * np.pi * 200 * t)
    assert np.sqrt(np.mean(lowpass(high, 1000, rate)[1000:] ** 2)) < 1e-3
    assert np.sqrt(np.mean(lowpass(low, 1000, rate)[1000:] ** 2)) > 0.6
