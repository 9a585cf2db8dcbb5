"""The public MTalk-Bench repository as shipped (a replica of its layout, see
``tests/benchmarks/mtalk_public_repo.py``), end to end: ``voxeval mtalk-suite data/`` loads 3
of 3 dialogues, 6 of 6 question recordings (from ``static/audio/``) and 7 of 7 models, 0
rejected; a run replays the 42 released replies as transcripts, labelled as such in
summary.json and summary.md, and the arena on transcripts warns that the paralinguistic and
ambient cues are not in them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from tests.benchmarks.mtalk_public_repo import MODELS, write_public_repo
from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from voxeval.cli.main import app

runner = CliRunner()


def always_a(path: str, body: dict[str, Any]) -> FakeResponse:
    return chat_text(json.dumps({"winner": "A", "reason": "first one"}))


def test_public_release_loads_and_runs_transcript_only(tmp_path: Path) -> None:
    repo = tmp_path / "MTalk-Bench"
    sample = write_public_repo(repo)
    suite = tmp_path / "suite"
    imported = runner.invoke(app, ["mtalk-suite", str(sample.parent), "-o", str(suite)])
    assert imported.exit_code == 0, imported.output
    said = " ".join(imported.output.split())
    assert "3 dialogues, 6 user turns, 7 models, 0 problems" in said
    assert "recordings found: 6 of 6 user turns, 0 of 42 replies" in said
    assert "(7 replay systems)" in said
    assert "warning: paralinguistic: 1 of 1 dialogues have no tag" in said
    manifest = (suite / "replies" / "gpt-4o.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(manifest[0])
    assert first["audio"] is None and first["transcript_only"] is True

    snippet = yaml.safe_load((suite / "systems.yaml").read_text(encoding="utf-8"))
    assert [s["name"] for s in snippet["systems"]] == sorted(MODELS)
    ran = snippet["systems"][:3]  # Doubao, GLM4-Voice, GPT-4o: enough to compare, and quick
    with FakeOpenAIServer(always_a) as server:
        config = {
            "suite": ".",
            "systems": ran,
            "judge": {"provider": "openai", "base_url": server.url, "model": "judge"},
            "cache_dir": str(tmp_path / "cache"),
        }
        (suite / "run.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        out = tmp_path / "run"
        result = runner.invoke(app, ["run", str(suite / "run.yaml"), "--out", str(out)])
        requests = len(server.posts())
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "report" / "summary.json").read_text(encoding="utf-8"))
    for model in ("Doubao", "GLM4-Voice", "GPT-4o"):
        entry = summary["systems"][model]
        assert entry["units"]["done"] == 3 and entry["units"]["failed"] == 0
        assert entry["transcript_only"] == {"turns": 6, "user_turns": 0, "replies": 6}
    stored = json.loads((out / "items" / "para-1-1" / "Doubao" / "0" / "dialogue.json").read_text())
    turn = stored["turns"][1]
    assert turn["reply_text"] == "Doubao answers para turn 2"
    assert turn["reply_audio"] is None and turn["reply_transcript_only"] is True
    assert turn["user_audio"] == str(repo / "static" / "audio" / "1-1-turn2_para.wav")
    # 3 dialogues x 3 pairs, both orders
    assert summary["comparisons"]["arena"]["done"] == 9 and requests == 18
    warnings = summary["arena"]["warnings"]
    assert [w.split(":")[0] for w in warnings] == ["paralinguistic", "ambient"]
    markdown = (out / "report" / "summary.md").read_text(encoding="utf-8")
    assert "Of 6 turns, 0 user turns have no recording and 6 replies are released" in markdown
    assert "Warning: ambient: 1 of 1 dialogues have no tag in their transcripts" in markdown
