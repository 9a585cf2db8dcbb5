"""Building a dialogue suite: the output folder is a loadable suite with audio per turn and a
manifest of events; same seed same bytes; a second build reuses what is there."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from voxeval.audio import read_audio
from voxeval.benchmarks.mtalk.dialogue import Dialogue, transcript_tags
from voxeval.benchmarks.mtalk.dialogue_suite import load_dialogue_suite
from voxeval.benchmarks.mtalk.mtalk_build import (
    MANIFEST,
    DialogueBuilder,
    build_dialogue_suite,
    check_tags,
)
from voxeval.cli.main import app
from voxeval.config import ProviderSpec
from voxeval.errors import ConfigError
from voxeval.providers.factory import availability

pytestmark = pytest.mark.skipif(
    not availability("tts", ProviderSpec(provider="espeak")).available,
    reason="espeak-ng is not installed",
)
ONLY = ["amb-work-2", "para-service-1"]


def _build(out: Path, seed: int = 0) -> object:
    return build_dialogue_suite(
        "mtalk-mini", out, seed=seed, engines=("espeak",), only=ONLY, progress=False
    )


def _wavs(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.wav"))}


def test_build_writes_a_loadable_suite_with_events(tmp_path: Path) -> None:
    built = _build(tmp_path / "a")
    suite = load_dialogue_suite(tmp_path / "a")
    assert suite.name == "mtalk-mini" and {d.id for d in suite.dialogues} == set(ONLY)
    for dialogue in suite.dialogues:
        for turn in dialogue.turns:
            assert turn.audio is not None
            audio = read_audio(turn.audio)
            assert audio.rate == 24000 and audio.duration > 1.0
    entries = {
        json.loads(line)["dialogue_id"]: json.loads(line)
        for line in (tmp_path / "a" / MANIFEST).read_text().splitlines()
    }
    ring_turn = entries["amb-work-2"]["turns"][1]
    ring = next(e for e in ring_turn["events"] if e["kind"] == "ambient")
    assert ring["tag"] == "[phone ringing]" and 0 < ring["start_s"] < ring["end_s"]
    assert ring["end_s"] <= ring_turn["duration_s"]
    assert ring_turn["spoken_text"].startswith("Ugh, that's my desk phone.")
    entry = entries["para-service-1"]
    assert entry["speaker_a"] != entry["speaker_b"]
    assert built.rendered == 2 and built.cached == 0  # type: ignore[attr-defined]
    summary = json.loads((tmp_path / "a" / "build.json").read_text())
    assert summary["dialogues"] == 2 and summary["turns"] == 4


def test_same_seed_same_bytes_and_resume(tmp_path: Path) -> None:
    _build(tmp_path / "a")
    _build(tmp_path / "b")
    assert _wavs(tmp_path / "a") == _wavs(tmp_path / "b")
    assert len(_wavs(tmp_path / "a")) == 4
    manifest = (tmp_path / "a" / MANIFEST).read_text()
    again = _build(tmp_path / "a")
    assert again.rendered == 0 and again.cached == 2  # type: ignore[attr-defined]
    assert (tmp_path / "a" / MANIFEST).read_text() == manifest
    # a deleted recording is rendered again, identically
    victim = tmp_path / "a" / "audio" / "amb-work-2" / "turn2.wav"
    before = victim.read_bytes()
    victim.unlink()
    redone = _build(tmp_path / "a")
    assert redone.rendered == 1 and victim.read_bytes() == before  # type: ignore[attr-defined]
    other = _build(tmp_path / "c", seed=1)
    assert other.rendered == 2  # type: ignore[attr-defined]
    assert _wavs(tmp_path / "c") != _wavs(tmp_path / "a")


def test_voices_user_and_second_speaker_differ_in_gender() -> None:
    builder = DialogueBuilder(seed=0, engines=("espeak",))
    for dialogue_id in ("amb-family-1", "amb-health-2", "amb-edu-2", "sem-work-1"):
        user, other = builder.voices(dialogue_id)
        assert user.gender != other.gender
        assert builder.voices(dialogue_id) == (user, other)  # stable


def test_unknown_tags_are_errors_naming_dialogue_and_turn() -> None:
    dialogue = Dialogue.model_validate(
        {
            "id": "x-1",
            "dimension": "ambient",
            "turns": [{"transcript": "fine"}, {"transcript": "[dog barking] hello <sarcastic>"}],
        }
    )
    with pytest.raises(
        ConfigError, match=r"dialogue x-1: turns.2: unknown sound tag \[dog barking\]"
    ):
        check_tags([dialogue], "s.yaml")


def test_cli_build_and_suites_list(tmp_path: Path) -> None:
    runner = CliRunner()
    listed = runner.invoke(app, ["suites"])
    assert listed.exit_code == 0 and "mtalk-mini" in listed.output
    out = tmp_path / "built"
    result = runner.invoke(
        app,
        ["build", "mtalk-mini", "-o", str(out), "--limit", "1", "--engines", "espeak", "--json"],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output[result.output.index("{") :])
    assert summary["dialogues"] == 1 and summary["turns"] == 3 and summary["rendered"] == 1
    assert (out / "suite.yaml").is_file() and len(list(out.rglob("*.wav"))) == 3


def test_built_folder_runs_as_a_multi_turn_suite(tmp_path: Path) -> None:
    """The built folder is what a run uses: the protocol hands the rendered turns to a
    system (replay here, offline) and records them; rubrics are not_run without a judge."""
    import numpy as np
    import yaml

    from voxeval.audio import Audio, write_audio

    built = build_dialogue_suite(
        "mtalk-mini", tmp_path / "built", engines=("espeak",), only=["amb-work-2"], progress=False
    )
    rows = []
    for turn in built.entries[0]["turns"]:
        wav = tmp_path / "replies" / f"{turn['item_id']}.wav"
        tone = 0.1 * np.sin(2 * np.pi * 220 * np.arange(16000) / 16000)
        write_audio(Audio(tone.astype(np.float32), 16000), wav)
        rows.append({"item_id": turn["item_id"], "audio": str(wav), "text": "A reply."})
    manifest = tmp_path / "replay.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = tmp_path / "run.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "suite": str(tmp_path / "built"),
                "systems": [{"name": "rec", "type": "replay", "manifest": str(manifest)}],
                "cache_dir": str(tmp_path / "cache"),
            }
        )
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", str(config), "--out", str(out)])
    assert result.exit_code == 0, result.output
    record = json.loads((out / "items" / "amb-work-2" / "rec" / "0" / "dialogue.json").read_text())
    turns = record["turns"]
    assert [Path(t["user_audio"]).name for t in turns] == ["turn1.wav", "turn2.wav"]
    assert turns[1]["user_text"].startswith("[phone ringing]")
    assert all(t["reply_text"] == "A reply." for t in turns)


# Dialogues with sound tags whose user (or second speaker, amb-inst-1) is the Piper voice in
# the default engines' cast at seed 0: 1 + 2 + 2 tags.
PIPER_CAST = ["para-family-1", "amb-health-1", "amb-inst-1"]


def _tag_spans_checked(entries: list[dict[str, Any]]) -> int:
    """Asserts every sound tag and interjection of every turn is an event inside its turn;
    returns how many tags it checked."""
    checked = 0
    for entry in entries:
        for turn in entry["turns"]:
            sounds = [t for t in _tags(turn["transcript"]) if t.startswith("[") or "Speaker B" in t]
            for tag in sounds:
                matching = [e for e in turn["events"] if e.get("tag") == tag]
                assert matching, (entry["dialogue_id"], turn["turn"], tag)
                for event in matching:
                    assert 0 <= event["start_s"] < event["end_s"] <= turn["duration_s"] + 1e-3
                checked += 1
    return checked


@pytest.mark.slow
def test_full_build_annotates_every_tag(tmp_path: Path) -> None:
    """All 54 dialogues: every sound tag and interjection of every turn is an event with a
    span inside its turn. The spans are placed on the rendered audio whatever the engine, so
    the full suite is voiced by espeak-ng (~4 s CPU instead of ~17 with Piper); the default
    engines voice three tagged dialogues with Piper in the cast."""
    built = build_dialogue_suite(
        "mtalk-mini", tmp_path / "all", engines=("espeak",), progress=False
    )
    assert len(built.entries) == 54
    assert sum(len(e["turns"]) for e in built.entries) == 118
    assert len(load_dialogue_suite(tmp_path / "all").dialogues) == 54
    assert _tag_spans_checked(built.entries) == 39  # every tag of the suite
    builder = DialogueBuilder(seed=0)
    assert all("piper" in {v.engine for v in builder.voices(d)} for d in PIPER_CAST)
    default = build_dialogue_suite(
        "mtalk-mini", tmp_path / "default", only=PIPER_CAST, progress=False
    )
    assert len(default.entries) == 3 and _tag_spans_checked(default.entries) == 5


def _tags(transcript: str) -> list[str]:
    return transcript_tags(transcript)
