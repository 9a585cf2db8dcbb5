"""A unit's reply handed from its interaction to its scoring: exactly what a read would give."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import soundfile as sf

from voxeval.audio import Audio, audio_to_wav_bytes, read_audio
from voxeval.audio.io import wav_file_audio
from voxeval.protocols.fresh_replies import FreshReplies


def _clip(seconds: float = 0.2) -> Audio:
    t = np.arange(int(16000 * seconds)) / 16000
    return Audio((0.4 * np.sin(2 * np.pi * 220 * t)).astype(np.float32), 16000)


def test_a_kept_reply_is_taken_once_as_its_files_would_read(tmp_path: Path) -> None:
    fresh = FreshReplies()
    unit_dir = tmp_path / "unit"
    unit_dir.mkdir()
    wav = audio_to_wav_bytes(_clip())
    (unit_dir / "assistant.wav").write_bytes(wav)
    text = '{\n  "text": "hi",\n  "timing": {"wall_s": 0.5}\n}\n'
    fresh.keep(unit_dir, text, wav)
    taken = fresh.take(unit_dir, "assistant.wav")
    assert taken is not None
    reply, audio = taken
    assert reply == json.loads(text)
    from_disk = read_audio(unit_dir / "assistant.wav")
    assert audio is not None and audio.rate == from_disk.rate == 16000
    assert np.array_equal(audio.samples, from_disk.samples)  # 16-bit, as stored
    assert audio.source == from_disk.source == str(unit_dir / "assistant.wav")
    assert audio.encoded_wav == wav
    assert fresh.take(unit_dir, "assistant.wav") is None  # taken: later reads use the files
    fresh.keep(unit_dir, "{}", None)
    assert fresh.take(unit_dir, "assistant.wav") == ({}, None)  # a reply without audio


def test_other_wav_encodings_decode_like_a_read(tmp_path: Path) -> None:
    path = tmp_path / "float.wav"
    sf.write(str(path), _clip().samples, 16000, subtype="FLOAT")
    audio = wav_file_audio(path.read_bytes(), path)
    assert np.array_equal(audio.samples, read_audio(path).samples)


def test_entries_are_bounded_and_a_failed_write_forgets_the_old_one(tmp_path: Path) -> None:
    fresh = FreshReplies(kept_max=2)
    for name in ("a", "b", "c"):
        fresh.keep(tmp_path / name, f'{{"id": "{name}"}}', None)
    assert fresh.take(tmp_path / "a", "assistant.wav") is None  # the oldest went
    assert fresh.take(tmp_path / "c", "assistant.wav") == ({"id": "c"}, None)
    fresh.forget(tmp_path / "b")
    assert fresh.take(tmp_path / "b", "assistant.wav") is None
