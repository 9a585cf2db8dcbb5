"""The WildSpeech-Bench release layout: JSONL + WAV files, embedded audio, suite generation."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from voxeval.audio import Audio, read_audio, write_audio
from voxeval.benchmarks import load_query_suite, resolve_suite
from voxeval.benchmarks.wildspeech.wildspeech_loader import (
    import_wildspeech,
    load_wildspeech,
    map_modification,
    map_task_type,
    split_checklist,
    write_wildspeech_suite,
)
from voxeval.errors import ConfigError


def _tone(freq: float = 220.0, rate: int = 16000) -> Audio:
    t = np.arange(rate // 2) / rate
    return Audio((0.3 * np.sin(2 * np.pi * freq * t)).astype(np.float32), rate)


def _wav_bytes(audio: Audio) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, audio.samples, audio.rate, format="WAV")
    return buf.getvalue()


def _rows(tmp_path: Path) -> list[dict]:
    write_audio(_tone(), tmp_path / "audio" / "0.wav")
    return [
        {
            "id": 0,
            "audio": "audio/0.wav",
            "user_query": "Describe the optimal gear ratio for fixed gear cycling",
            "taskType": "Information-Inquiry",
            "checklist": "- Gives example ratios\n- Checks gear-inch maths",
            "modification_type": None,
            "additional_info": {"theme": "sport"},
        },
        {
            "id": "pf 1",
            "audio": {"bytes": list(_wav_bytes(_tone(330)))},
            "user_query": "A woman without her man is nothing",
            "taskType": "Paralinguistic-Featured",
            "checklist": ["Notices the pause changes the meaning"],
            "modification_type": "pause",
        },
        {
            "audio": {"array": _tone(440).samples.tolist(), "sampling_rate": 16000},
            "user_query": "Write a haiku about tea",
            "taskType": "Text Creation",
            "checklist": [],
        },
    ]


def _jsonl(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "test.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_mappings() -> None:
    assert map_task_type("Request For Solution") == "SR"
    assert map_task_type("Opinion Exchange") == "OE"
    assert map_task_type("Prosodical") == "PF"
    assert map_task_type("TC") == "TC"
    assert map_task_type("weather") is None
    assert map_modification("Near-Homophone") == "near-homophone"
    assert map_modification("stuttering") == "stutter"
    assert split_checklist("1. first\n* second\n\n") == ["first", "second"]


def test_loads_rows_with_path_and_array_audio(tmp_path: Path) -> None:
    rows = _rows(tmp_path)
    del rows[1]  # bytes in JSONL are covered by the parquet-style test below
    queries = load_wildspeech(_jsonl(tmp_path, rows), audio_dir=tmp_path / "cache")
    assert [q.category for q in queries] == ["II", "TC"]
    # no id in the row: derived from the text, never from the row's position
    assert queries[0].id == "0" and queries[1].id.startswith("ws-")
    assert queries[1].id != "ws-00001"
    assert queries[0].checklist == ["Gives example ratios", "Checks gear-inch maths"]
    assert queries[0].metadata["additional_info"] == {"theme": "sport"}
    assert read_audio(queries[1].audio or "").rate == 16000
    assert Path(queries[1].audio or "").parent == tmp_path / "cache"


def test_embedded_bytes_are_decoded(tmp_path: Path) -> None:
    row = _rows(tmp_path)[1]
    row["additional_info"] = "pause"
    result = import_wildspeech(_jsonl(tmp_path, [row]), audio_dir=tmp_path / "cache")
    (query,) = result.queries
    assert query.id == "pf-1" and query.subcategory == "pause" and query.condition == "clean"
    assert read_audio(query.audio or "").duration == pytest.approx(0.5)


def test_bad_rows_are_reported_with_file_row_and_field(tmp_path: Path) -> None:
    rows = _rows(tmp_path)[:1] * 4
    rows[1] = {**rows[0], "id": "b", "taskType": "Paralinguistic", "modification_type": "x"}
    rows[2] = {**rows[0], "id": "c", "audio": "missing.wav"}
    rows[3] = {**rows[0], "id": "d", "taskType": "Gardening"}  # kept as its own category
    data = _jsonl(tmp_path, rows)
    result = import_wildspeech(data, audio_dir=tmp_path / "cache")
    assert [(q.id, q.category) for q in result.queries] == [("0", "II"), ("d", "gardening")]
    assert [(r.row, r.field) for r in result.rejects] == [(2, "additional_info"), (3, "audio")]
    assert f"{data}: row 3: audio: file not found" in result.summary()
    with pytest.raises(ConfigError, match=r"row 1: audio: file not found"):
        load_wildspeech(_jsonl(tmp_path, [rows[2]]))


def test_generated_suite_resolves_and_loads(tmp_path: Path) -> None:
    rows = _rows(tmp_path)
    del rows[1]
    data = _jsonl(tmp_path, rows)
    suite = write_wildspeech_suite(data, tmp_path / "suite", name="ws-test")
    info = resolve_suite(str(suite.parent))
    assert (info.name, info.protocol) == ("ws-test", "single_turn")
    assert len(load_query_suite(suite.parent)) == 2
    assert len(load_query_suite(data)) == 2  # the JSONL itself is recognised too


def test_embedded_audio_of_the_wrong_type_is_a_rejected_row(tmp_path: Path) -> None:
    # a text "bytes" used to escape as a TypeError from bytes(), aborting the whole import
    good = _rows(tmp_path)[0]
    rows = [
        {**good, "id": "s", "audio": {"bytes": "UklGRg=="}},
        {**good, "id": "r", "audio": {"array": [0.0, 0.1], "sampling_rate": [16000]}},
    ]
    result = import_wildspeech(_jsonl(tmp_path, [good, *rows]), audio_dir=tmp_path / "cache")
    assert [q.id for q in result.queries] == ["0"]
    assert [(r.row, r.field) for r in result.rejects] == [(2, "audio"), (3, "audio")]
    assert "'bytes' holds str, not binary data" in result.summary()
    assert "sampling_rate is list, not a number" in result.summary()
