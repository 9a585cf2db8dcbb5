"""A suite loaded twice is validated once while its file and recordings are unchanged."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import yaml

from voxeval.audio import Audio, write_audio
from voxeval.benchmarks.wildspeech import query_suite
from voxeval.benchmarks.wildspeech.query_suite import load_query_suite
from voxeval.benchmarks.wildspeech.spoken_query import SpokenQuery
from voxeval.benchmarks.wildspeech.validated_suites import validated_queries
from voxeval.errors import ConfigError


def _suite(folder: Path, n: int = 3) -> Path:
    clip = Audio(np.full(1600, 0.1, dtype=np.float32), 16000)
    write_audio(clip, folder / "q.wav")
    queries = [
        {"id": f"q{i}", "text": "Hello there.", "category": "II", "audio": "q.wav"}
        for i in range(n)
    ]
    path = folder / "suite.yaml"
    suite = {"name": "s", "protocol": "single_turn", "queries": queries}
    path.write_text(yaml.safe_dump(suite), encoding="utf-8")
    return path


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = query_suite.validate_queries

    def counted(*args: object, **kwargs: object) -> list[SpokenQuery]:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(query_suite, "validate_queries", counted)
    return calls


def test_a_second_load_of_an_unchanged_suite_reuses_the_validation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _suite(tmp_path)
    calls = _counting(monkeypatch)
    first = load_query_suite(path)
    second = load_query_suite(path)
    assert len(calls) == 1
    assert second == first
    assert [q.audio for q in second] == [str((tmp_path / "q.wav").resolve())] * 3


def test_a_changed_recording_or_suite_file_is_validated_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _suite(tmp_path)
    calls = _counting(monkeypatch)
    load_query_suite(path)
    audio = tmp_path / "q.wav"
    stamp = audio.stat()
    os.utime(audio, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 1_000_000))
    load_query_suite(path)
    assert len(calls) == 2
    path.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert len(load_query_suite(path)) == 3
    assert len(calls) == 3


def test_a_vanished_recording_is_reported_again(tmp_path: Path) -> None:
    path = _suite(tmp_path)
    load_query_suite(path)
    (tmp_path / "q.wav").unlink()
    with pytest.raises(ConfigError, match="item #1 \\(id='q0'\\): audio: file not found"):
        load_query_suite(path)


def test_callers_get_their_own_copies(tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text("x", encoding="utf-8")
    made = [SpokenQuery(id="a", text="Hi.", category="II", checklist=["says hi"])]
    first = validated_queries(path, lambda: made)
    first[0].checklist.append("edited by a caller")
    again = validated_queries(path, lambda: [])  # reused: the validator is not called
    assert again[0].checklist == ["says hi"]
    assert again[0] is not first[0]
