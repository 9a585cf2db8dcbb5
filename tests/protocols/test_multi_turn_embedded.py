"""The offline path of the multi-turn protocol: ``voxeval build mtalk-mini --limit 1`` renders
one dialogue, and the embedded cascade (Whisper tiny.en -> SmolLM2 -> Piper, as in
examples/quickstart.yaml) and a replay system answer it turn by turn with no judge configured.
What SmolLM2 says is never checked, only that a reply is stored for every turn."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from voxeval.audio import Audio, read_audio, write_audio
from voxeval.cli.main import app
from voxeval.config import ProviderSpec
from voxeval.providers.factory import availability

runner = CliRunner()


@pytest.mark.models
@pytest.mark.slow
def test_embedded_cascade_and_replay_answer_mtalk_mini(tmp_path: Path) -> None:
    if not availability("tts", ProviderSpec(provider="espeak")).available:
        pytest.skip("espeak-ng is not installed")
    built = tmp_path / "built"
    result = runner.invoke(
        app, ["build", "mtalk-mini", "-o", str(built), "--limit", "1", "--engines", "espeak"]
    )
    assert result.exit_code == 0, result.output
    dialogue = json.loads((built / "dialogues.jsonl").read_text().splitlines()[0])
    dialogue_id, n_turns = dialogue["id"], len(dialogue["turns"])
    assert n_turns >= 2

    rows = []
    for n in range(1, n_turns + 1):
        wav = tmp_path / "replies" / f"turn{n}.wav"
        tone = 0.1 * np.sin(2 * np.pi * 220 * np.arange(8000) / 16000)
        write_audio(Audio(tone.astype(np.float32), 16000), wav)
        rows.append({"item_id": f"{dialogue_id}.turn{n}", "audio": str(wav), "text": f"R{n}."})
    manifest = tmp_path / "replay.jsonl"
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = tmp_path / "run.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "suite": str(built),
                "systems": [
                    {"name": "tiny-cascade", "type": "cascade", "max_tokens": 24},
                    {"name": "recorded", "type": "replay", "manifest": str(manifest)},
                ],
                "cache_dir": str(tmp_path / "cache"),
                "concurrency": 1,
            }
        )
    )
    out = tmp_path / "out"
    result = runner.invoke(app, ["run", str(config), "--out", str(out)])
    assert result.exit_code == 0, result.output

    folder = out / "items" / dialogue_id / "tiny-cascade" / "0"
    turns = json.loads((folder / "dialogue.json").read_text())["turns"]
    assert [t["index"] for t in turns] == list(range(1, n_turns + 1))
    for turn in turns:
        assert isinstance(turn["reply_text"], str) and turn["reply_text"].strip()
        reply = read_audio(folder / turn["reply_audio"])
        assert reply.duration == pytest.approx(turn["reply_duration_s"], abs=0.05)
        assert reply.duration > 0.2
    replayed = json.loads(
        (out / "items" / dialogue_id / "recorded" / "0" / "dialogue.json").read_text()
    )["turns"]
    assert [t["reply_text"] for t in replayed] == [f"R{n}." for n in range(1, n_turns + 1)]

    summary = json.loads((out / "report" / "summary.json").read_text())
    for name in ("tiny-cascade", "recorded"):
        entry = summary["systems"][name]
        assert entry["units"] == {**entry["units"], "done": 1, "failed": 0}
        assert entry["not_run"]["rubric"].startswith("no judge configured")
        assert entry["not_run"]["rubric_turns"].startswith("no judge configured")
        assert entry["overall"] == {}  # nothing judged, nothing made up
    # without a judge the arena is not a default step: the offline run is complete without it
    assert summary["comparisons"] == {}
