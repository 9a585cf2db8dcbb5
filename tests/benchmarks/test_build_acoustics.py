"""Builds through the acoustic channel: the reverb and playback conditions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import signal
from typer.testing import CliRunner

from voxeval.audio import Audio, read_audio, rms_db
from voxeval.benchmarks.build import build_suite
from voxeval.benchmarks.build_options import BuildOptions, parse_build_options
from voxeval.config import ProviderSpec
from voxeval.errors import ConfigError
from voxeval.providers.factory import availability

pytest.importorskip("pyroomacoustics")
if not availability("tts", ProviderSpec(provider="espeak")).available:
    pytest.skip("espeak-ng is not installed", allow_module_level=True)

QUERIES = [
    {"id": "a", "text": "What is the capital of France?", "category": "II"},
    {"id": "b", "text": "Please book a table for two at seven.", "category": "SR"},
]
OPTIONS = BuildOptions(
    profiles=1,
    engines=["espeak"],
    seed=5,
    conditions=["clean", "reverb", "playback"],
    room="small_office",
    room_placements=2,
)


def _suite(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump({"name": "tiny", "protocol": "single_turn", "queries": QUERIES}))
    return path


def _band_db(audio: Audio, low: float, high: float) -> float:
    freqs, power = signal.welch(audio.samples, fs=audio.rate, nperseg=512)
    return float(10 * np.log10(np.mean(power[(freqs >= low) & (freqs < high)])))


def _frame_db(audio: Audio, frame_s: float = 0.02) -> np.ndarray:
    size = round(frame_s * audio.rate)
    n = audio.num_samples // size
    frames = audio.samples[: n * size].astype(np.float64).reshape(n, size)
    return np.asarray(10 * np.log10(np.mean(frames**2, axis=1) + 1e-12))


def test_acoustic_conditions_write_files_whose_spectra_show_the_channel(tmp_path: Path) -> None:
    built = build_suite(_suite(tmp_path / "s"), tmp_path / "out", OPTIONS, progress=False)
    assert len(built.items) == 6
    item = {i.condition: i for i in built.items if i.query.id == "a"}
    clean, reverb, played = (read_audio(item[c].audio_path) for c in OPTIONS.conditions)

    # reverb: the room rings on after the words and fills the gaps between them
    room = item["reverb"].entry["acoustics"]["room"]
    tail = reverb.num_samples - clean.num_samples
    assert tail == pytest.approx(room["ir_s"] * clean.rate, abs=10)  # ir_s is rounded to 1 ms
    spread = lambda a: np.percentile(_frame_db(a), 90) - np.percentile(_frame_db(a), 10)  # noqa: E731
    assert spread(reverb.slice(0, clean.duration)) < spread(clean) - 5.0
    end = clean.duration
    ring = [rms_db(reverb.slice(end + a, end + a + 0.1)) for a in (0.0, 0.1, 0.2)]
    assert ring[0] > rms_db(clean) - 35.0  # audible decay after the last word
    assert ring[0] > ring[1] + 5.0 > ring[2] + 10.0  # ... that dies away

    # playback: a phone loudspeaker removes the bass and the top of the voice
    def tilt(a: Audio) -> tuple[float, float]:
        mid = _band_db(a, 800, 2500)
        return _band_db(a, 50, 150) - mid, _band_db(a, 5000, 7500) - mid

    (clean_low, clean_high), (low, high) = tilt(clean), tilt(played)
    assert low < clean_low - 20.0
    assert high < clean_high - 20.0


def test_manifest_records_room_device_placement_and_seed(tmp_path: Path) -> None:
    built = build_suite(_suite(tmp_path / "s"), tmp_path / "out", OPTIONS, progress=False)
    for entry in (i.entry for i in built.items):
        if entry["condition"] == "clean":
            assert "acoustics" not in entry
            continue
        acoustics = entry["acoustics"]
        assert acoustics["placements"] == 2 and acoustics["placement"] in (0, 1)
        room = acoustics["room"]
        assert {"seed", "talker_m", "mic_m", "rt60_s", "measured_rt60_s", "drr_db"} <= set(room)
        if entry["condition"] == "reverb":
            assert room["room"] == "small_office" and room["distance_m"] == 1.0
        else:
            assert acoustics["device"]["name"] == "phone"
            assert acoustics["device"]["low_hz"] == 300.0
            assert room["room"] == "small_office"  # the default recapture room
    lines = (tmp_path / "out" / "manifest.jsonl").read_text().splitlines()
    assert [json.loads(x)["acoustics"] for x in lines if "acoustics" in x] == [
        i.entry["acoustics"] for i in built.items if i.condition != "clean"
    ]


def test_acoustic_builds_repeat_by_seed_and_rerender_when_the_room_changes(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "s")
    one = build_suite(suite, tmp_path / "one", OPTIONS, progress=False)
    two = build_suite(suite, tmp_path / "two", OPTIONS, progress=False)
    for x, y in zip(one.items, two.items, strict=True):
        assert x.entry == y.entry
        assert x.audio_path.read_bytes() == y.audio_path.read_bytes()
    reseeded = build_suite(
        suite, tmp_path / "three", OPTIONS.model_copy(update={"seed": 6}), progress=False
    )
    talkers = lambda b: [  # noqa: E731
        i.entry["acoustics"]["room"]["talker_m"] for i in b.items if i.condition == "reverb"
    ]
    assert talkers(reseeded) != talkers(one)
    hall = parse_build_options({**OPTIONS.model_dump(), "room": "meeting_room"})
    again = build_suite(suite, tmp_path / "one", hall, progress=False)
    assert (again.rendered, again.cached) == (2, 4)  # only the reverb items change


def test_playback_without_a_room_and_bad_options(tmp_path: Path) -> None:
    options = OPTIONS.model_copy(update={"conditions": ["playback"], "playback_room": None})
    options = parse_build_options(options.model_dump())
    built = build_suite(_suite(tmp_path / "s"), tmp_path / "out", options, progress=False)
    entry = built.items[0].entry
    assert "room" not in entry["acoustics"] and entry["duration_s"] == entry["speech_duration_s"]
    for bad, match in [
        ({"room": "cave"}, "unknown room"),
        ({"device": "gramophone"}, "device"),
        ({"playback_room": "cave"}, "playback_room"),
        ({"room": "car", "distance_m": 4.0}, "distance_m"),
        ({"conditions": ["reverb"], "room": "car", "rt60_s": 2.0}, "image order"),
        ({"conditions": ["rainy"]}, "unknown conditions"),
    ]:
        with pytest.raises(ConfigError, match=match):
            parse_build_options(bad)
    assert BuildOptions().conditions == ["clean", "natural_noise", "human_noise"]


def test_cli_builds_a_reverb_condition(tmp_path: Path) -> None:
    from voxeval.cli.main import app

    args = [
        "build",
        str(_suite(tmp_path / "s")),
        "-o",
        str(tmp_path / "out"),
        "--profiles",
        "1",
        "--engines",
        "espeak",
        "--conditions",
        "reverb,playback",
        "--room",
        "car",
        "--device",
        "laptop",
        "--playback-room",
        "none",
        "--limit",
        "1",
        "--json",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    manifest = [
        json.loads(line) for line in (tmp_path / "out" / "manifest.jsonl").read_text().splitlines()
    ]
    by_condition = {e["condition"]: e["acoustics"] for e in manifest}
    assert by_condition["reverb"]["room"]["room"] == "car"
    assert by_condition["playback"]["device"]["name"] == "laptop"
    assert "room" not in by_condition["playback"]
