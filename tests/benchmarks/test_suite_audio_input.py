"""Recorded suite audio: channel choice, size/duration limits checked at load, errors naming
the item and field, near-silent recordings flagged instead of boosted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf
import yaml

from voxeval.audio import Audio, AudioLimits, rms_db, write_audio
from voxeval.benchmarks.build import build_suite
from voxeval.benchmarks.build_options import BuildOptions
from voxeval.benchmarks.wildspeech.query_suite import (
    SuiteAudioInput,
    load_query_suite,
    read_query_audio,
)
from voxeval.errors import AudioError, ConfigError

RATE = 16000
OPTIONS = BuildOptions(profiles=1, conditions=["clean"], seed=1)


def tone(hz: float, amp: float, seconds: float = 1.0) -> np.ndarray:
    t = np.arange(int(RATE * seconds)) / RATE
    return (amp * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def write_suite(folder: Path, queries: list[dict[str, Any]], **header: Any) -> Path:
    path = folder / "suite.yaml"
    suite = {"name": "rec", "protocol": "single_turn", **header, "queries": queries}
    path.write_text(yaml.safe_dump(suite))
    return path


def query(qid: str, **fields: Any) -> dict[str, Any]:
    return {"id": qid, "text": "Hello there.", "category": "II", "audio": f"{qid}.wav", **fields}


def correlation(a: np.ndarray, b: np.ndarray) -> float:
    n = min(a.size, b.size)
    return float(np.corrcoef(a[:n], b[:n])[0, 1])


def test_channels_from_the_suite_and_per_query(tmp_path: Path) -> None:
    left, right = tone(300, 0.3), tone(710, 0.2)
    for qid in ("q1", "q2"):
        sf.write(str(tmp_path / f"{qid}.wav"), np.stack([left, right], axis=1), RATE)
    suite = write_suite(tmp_path, [query("q1"), query("q2", channels="right")], channels="left")
    queries = load_query_suite(suite)
    assert [q.channels for q in queries] == ["left", "right"]
    built = build_suite(suite, tmp_path / "out", OPTIONS, progress=False)
    rendered = {i.query.id: sf.read(str(i.audio), dtype="float32")[0] for i in built.items}
    assert (
        correlation(rendered["q1"], left) > 0.99 and abs(correlation(rendered["q1"], right)) < 0.1
    )
    assert correlation(rendered["q2"], right) > 0.99
    # without a header the default is to mix
    default = write_suite(tmp_path, [query("q1")])
    assert load_query_suite(default)[0].channels == "mix"


def test_limits_fail_the_suite_load_naming_item_and_field(tmp_path: Path) -> None:
    write_audio(Audio(tone(300, 0.3, seconds=2.0), RATE), tmp_path / "q1.wav")
    write_audio(Audio(tone(300, 0.3, seconds=0.5), RATE), tmp_path / "q2.wav")
    suite = write_suite(tmp_path, [query("q1"), query("q2")], max_audio_s=1.0)
    with pytest.raises(ConfigError) as err:
        load_query_suite(suite)
    message = str(err.value)
    assert f"{suite}: item #1 (id='q1'): audio: " in message
    assert "audio is 2 s long; the limit is 1 s (max_audio_s)" in message
    assert "q2" not in message
    small = write_suite(tmp_path, [query("q2")], max_audio_mb=0.001)
    with pytest.raises(ConfigError, match=r"item #1 \(id='q2'\): audio: .*max_audio_mb"):
        load_query_suite(small)
    with pytest.raises(ConfigError, match="max_audio_s"):
        load_query_suite(write_suite(tmp_path, [query("q2")], max_audio_s=0))


def test_read_errors_name_the_suite_item_and_field(tmp_path: Path) -> None:
    write_audio(Audio(tone(300, 0.3), RATE), tmp_path / "q1.wav")
    (q,) = load_query_suite(write_suite(tmp_path, [query("q1")]))
    tight = SuiteAudioInput(limits=AudioLimits(max_seconds=0.5))
    with pytest.raises(AudioError, match=r"^my-suite\.yaml: item 'q1': audio: .*q1\.wav: audio is"):
        read_query_audio(q, tight, "my-suite.yaml")


def test_near_silent_recording_is_flagged_not_boosted(tmp_path: Path) -> None:
    floor = np.random.default_rng(0).standard_normal(RATE).astype(np.float32) * 10 ** (-90 / 20)
    sf.write(str(tmp_path / "q1.wav"), floor, RATE, subtype="FLOAT")
    write_audio(Audio(tone(300, 0.1), RATE), tmp_path / "q2.wav")
    built = build_suite(
        write_suite(tmp_path, [query("q1"), query("q2")]), tmp_path / "out", OPTIONS,
        progress=False,
    )  # fmt: skip
    items = {i.query.id: i for i in built.items}
    level = items["q1"].entry["level"]
    assert level["near_silent"] is True and level["gain_db"] == 30.0
    assert level["wanted_gain_db"] == pytest.approx(70.0, abs=0.5)
    quiet = sf.read(str(items["q1"].audio), dtype="float32")[0]
    assert rms_db(Audio(quiet, RATE)) < -55  # -90 + 30, not the -20 dBFS speech target
    assert "level" not in items["q2"].entry  # ordinary recordings carry no flag
