from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

from tests.systems.helpers import chirp
from voxeval.audio import write_audio
from voxeval.config import SystemSpec
from voxeval.errors import AudioError, ConfigError
from voxeval.registry import lookup
from voxeval.systems import MissingReply, ReplaySystem, Turn


def make(**options) -> ReplaySystem:
    spec = SystemSpec(name="rec", type="replay", **options)
    system: ReplaySystem = lookup("system", "replay").from_spec(spec, None)
    return system


def ask(system: ReplaySystem, item_id: str):
    return system.reply([Turn(role="user", audio=chirp(), item_id=item_id)])


def test_folder_of_wavs_with_optional_text(tmp_path) -> None:
    write_audio(chirp(1.0), tmp_path / "q1.wav")
    (tmp_path / "q1.txt").write_text("Paris.\n")
    write_audio(chirp(0.5), tmp_path / "q2.wav")
    system = make(folder=str(tmp_path))
    first = ask(system, "q1")
    assert first.audio is not None and first.audio.duration == pytest.approx(1.0)
    assert first.text == "Paris."
    assert ask(system, "q2").text is None
    with pytest.raises(MissingReply, match=r"has no reply for item 'q3'") as err:
        ask(system, "q3")
    assert str(tmp_path) in str(err.value)


def test_manifest_paths_are_relative_to_it(tmp_path) -> None:
    write_audio(chirp(0.25), tmp_path / "audio" / "a.wav")
    manifest = tmp_path / "replies.jsonl"
    manifest.write_text(json.dumps({"item_id": "q1", "audio": "audio/a.wav", "text": "hi"}) + "\n")
    system = make(manifest=str(manifest))
    reply = ask(system, "q1")
    assert reply.text == "hi" and reply.audio is not None
    with pytest.raises(MissingReply, match="no row for item 'q2'"):
        ask(system, "q2")


def test_bad_options_name_the_system(tmp_path) -> None:
    with pytest.raises(ConfigError, match="system 'rec'"):
        make()
    with pytest.raises(ConfigError, match="does not exist"):
        make(folder=str(tmp_path / "missing"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"item_id": "q1"}\n')
    with pytest.raises(ConfigError, match=r"bad\.jsonl:1"):
        make(manifest=str(bad))


def _stereo(path) -> tuple[np.ndarray, np.ndarray]:
    left, right = chirp(1.0).samples, chirp(1.0).samples[::-1].copy()
    sf.write(str(path), np.stack([left, right], axis=1), 16000, subtype="FLOAT")
    return left, right


def test_channels_option_for_stereo_replies(tmp_path) -> None:
    left, right = _stereo(tmp_path / "q1.wav")
    for mode, expected in (("mix", (left + right) / 2), ("left", left), ("right", right)):
        reply = ask(make(folder=str(tmp_path), channels=mode), "q1")
        assert reply.audio is not None and np.allclose(reply.audio.samples, expected, atol=1e-6)
    assert np.allclose(ask(make(folder=str(tmp_path)), "q1").audio.samples, (left + right) / 2)
    manifest = tmp_path / "replies.jsonl"
    manifest.write_text(json.dumps({"item_id": "q1", "audio": "q1.wav", "channels": "left"}))
    reply = ask(make(manifest=str(manifest), channels="right"), "q1")
    assert np.allclose(reply.audio.samples, left, atol=1e-6)  # the row's own choice wins
    with pytest.raises(ConfigError, match="channels"):
        make(folder=str(tmp_path), channels="both")


def test_limits_and_errors_name_system_source_and_item(tmp_path, monkeypatch) -> None:
    write_audio(chirp(2.0), tmp_path / "q1.wav")
    monkeypatch.setattr(sf.SoundFile, "read", lambda *a, **k: pytest.fail("decoded"))
    with pytest.raises(AudioError) as err:
        ask(make(folder=str(tmp_path), max_audio_s=1.0), "q1")
    message = str(err.value)
    assert message.startswith(f"system 'rec': replay folder {tmp_path}: item 'q1': q1.wav: ")
    assert "audio is 2 s long; the limit is 1 s (max_audio_s)" in message
    manifest = tmp_path / "replies.jsonl"
    manifest.write_text(json.dumps({"item_id": "q1", "audio": "q1.wav"}))
    with pytest.raises(
        AudioError, match=rf"replay manifest {manifest}: item 'q1': audio: .*max_audio_mb"
    ):
        ask(make(manifest=str(manifest), max_audio_mb=0.001), "q1")
