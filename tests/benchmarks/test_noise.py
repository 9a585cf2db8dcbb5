"""Noise library: category sampling ratios, determinism, user-folder layouts, generators."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from voxeval.audio import Audio, write_audio
from voxeval.audio.sound_textures import SOUND_TEXTURES, render_texture
from voxeval.benchmarks.noise import NoiseLibrary
from voxeval.benchmarks.noise_sources import NOISE_CATEGORIES
from voxeval.errors import ConfigError


def _tone(freq: float, seconds: float = 1.5, rate: int = 16000) -> Audio:
    t = np.arange(round(seconds * rate)) / rate
    return Audio((0.3 * np.sin(2 * np.pi * freq * t)).astype(np.float32), rate)


def _centroid(audio: Audio) -> float:
    spectrum = np.abs(np.fft.rfft(audio.samples))
    freqs = np.fft.rfftfreq(audio.num_samples, 1 / audio.rate)
    return float((spectrum * freqs).sum() / spectrum.sum())


def test_category_sampling_follows_the_protocol_ratios() -> None:
    library = NoiseLibrary(system_sounds=False)
    n = 20000
    counts = Counter(library.pick_category(seed) for seed in range(n))
    for category, ratio in NOISE_CATEGORIES.items():
        assert counts[category] / n == pytest.approx(ratio, abs=0.012), category


def test_draws_are_deterministic_by_seed() -> None:
    library = NoiseLibrary(system_sounds=False)
    a, b = library.sample_natural(7), library.sample_natural(7)
    assert a.audio == b.audio and a.source == b.source
    labels = {library.sample_natural(s).source.label for s in range(40)}
    assert len(labels) >= 6


@pytest.mark.parametrize("name", sorted(SOUND_TEXTURES))
def test_generators_make_audible_finite_audio(name: str) -> None:
    audio = render_texture(name, seed=3, duration_s=2.0)
    assert audio.duration == pytest.approx(2.0)
    assert np.isfinite(audio.samples).all()
    assert 0.01 < float(np.sqrt(np.mean(audio.samples**2))) <= 0.9
    assert render_texture(name, seed=3, duration_s=2.0) == audio
    assert render_texture(name, seed=4, duration_s=2.0) != audio


def test_generators_have_their_expected_spectra() -> None:
    assert _centroid(render_texture("rain", 1)) > 2 * _centroid(render_texture("traffic", 1))
    siren = render_texture("siren", 1)
    assert 500 < _centroid(siren) < 2500
    assert _centroid(render_texture("crickets", 1)) > 3500


def test_esc50_layout_maps_classes_to_categories(tmp_path: Path) -> None:
    (tmp_path / "meta").mkdir()
    (tmp_path / "meta" / "esc50.csv").write_text(
        "filename,fold,target,category,esc10,src_file,take\n"
        "1-dog.wav,1,0,dog,True,x,A\n1-siren.wav,1,42,siren,False,y,A\n1-odd.wav,1,99,unknown,False,z,A\n"
    )
    for name, freq in (("1-dog", 300), ("1-siren", 900), ("1-odd", 100)):
        write_audio(_tone(freq), tmp_path / "audio" / f"{name}.wav")
    library = NoiseLibrary([tmp_path], system_sounds=False)
    info = library.describe()["categories"]
    assert info["animals"]["recorded"] == 1
    assert info["exterior_urban"]["recorded"] == 1
    assert info["natural_soundscapes"]["missing_recordings"] is True
    assert library.describe()["unmapped_files"] == 1
    clip = library.sample_clip("animals", 0)
    assert clip.source.origin.startswith("ESC-50") and clip.source.label == "dog"
    assert library.sources("exterior_urban")[0].label == "siren"  # recordings before generated


def test_demand_and_musan_layouts(tmp_path: Path) -> None:
    demand = tmp_path / "demand"
    write_audio(_tone(200), demand / "DKITCHEN" / "ch01.wav")
    write_audio(_tone(200), demand / "STRAFFIC" / "ch01.wav")
    musan = tmp_path / "musan"
    write_audio(_tone(500), musan / "noise" / "free-sound" / "noise-0001.wav")
    (musan / "noise" / "free-sound" / "ANNOTATIONS").write_text("noise-0001 heavy rain on a roof\n")
    for i in range(3):
        write_audio(_tone(150 + 50 * i), musan / "speech" / "librivox" / f"s{i}.wav")
    library = NoiseLibrary([demand, musan], system_sounds=False)
    cats = library.describe()["categories"]
    assert cats["interior_domestic"]["recorded"] == 1
    assert cats["exterior_urban"]["recorded"] == 1
    assert cats["natural_soundscapes"]["recorded"] == 1
    babble = library.babble(seed=1, duration_s=3.0)
    assert babble.audio.duration == pytest.approx(3.0)
    assert babble.category == "human_noise"
    assert len(babble.parts) >= 3


def test_babble_needs_three_clips_and_uses_given_voices() -> None:
    library = NoiseLibrary(system_sounds=False)
    with pytest.raises(ConfigError, match="at least 3 speech clips"):
        library.babble(0, 2.0, [_tone(200), _tone(300)])
    clip = library.babble(0, 2.0, [_tone(200), _tone(300), _tone(400)])
    assert clip.source.origin == "tts voices"
    assert clip.audio.duration == pytest.approx(2.0)


def test_generated_only_policy_ignores_recordings(tmp_path: Path) -> None:
    write_audio(_tone(200), tmp_path / "animals" / "moo.wav")
    assert NoiseLibrary([tmp_path], system_sounds=False).sources("animals")[0].label == "moo"
    only = NoiseLibrary([tmp_path], system_sounds=False, generated="only")
    assert {s.origin for s in only.sources("animals")} == {"generated"}
    with pytest.raises(ConfigError, match="unknown category"):
        only.sources("birds")


def test_installed_system_sounds_are_described() -> None:
    info = NoiseLibrary().describe()
    domestic = info["categories"]["interior_domestic"]
    if Path("/usr/share/sounds/freedesktop/stereo").is_dir():
        assert "sound-theme-freedesktop" in domestic["recorded_origins"]
    else:
        assert any("sound-theme-freedesktop" in n for n in info["notes"])


def test_cli_noise_sources_json(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from voxeval.cli.main import app

    write_audio(_tone(200), tmp_path / "animals" / "moo.wav")
    result = CliRunner().invoke(app, ["noise-sources", "--noise-dir", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout[result.stdout.index("{") :])
    assert info["categories"]["animals"]["recorded"] >= 1
    assert set(info["categories"]) == set(NOISE_CATEGORIES)
