"""`voxeval validate` on a multi-turn suite: every mistake at once, a note without a judge."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from tests.protocols.test_multi_turn import write_replay, write_suite
from voxeval.cli.main import app


def config_file(root: Path, **extra: object) -> Path:
    config = {
        "suite": str(write_suite(root)),
        "systems": [{"name": "recorded", "type": "replay", "manifest": str(write_replay(root))}],
        **extra,
    }
    path = root / "run.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_valid_plan_notes_the_missing_judge(tmp_path) -> None:
    # content_density scores the replies of a dialogue: it applies to multi-turn records too
    path = config_file(tmp_path, metrics=["rubric", "rubric_turns", "content_density"])
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    assert "OK: suite tiny-dialogues (multi_turn)" in result.output
    out = " ".join(result.output.split())
    assert "no judge configured: the rubric metrics (rubric, rubric_turns) will be not_run" in out


def test_audio_rubrics_note_the_missing_audio_judge(tmp_path) -> None:
    path = config_file(tmp_path, metrics=["rubric"], scoring={"rubric": {"mode": "audio"}})
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert "no audio judge configured: the rubric metrics (rubric, rubric_turns) judge" in out
    assert "no judge configured" not in out
    bad = config_file(tmp_path, scoring={"rubric": {"protocol": "reference", "mode": "text"}})
    result = CliRunner().invoke(app, ["validate", str(bad)])
    assert result.exit_code != 0
    assert "protocol reference judges from audio" in " ".join(result.output.split())


def test_every_mistake_is_listed(tmp_path) -> None:
    path = config_file(
        tmp_path,
        metrics=["rubric", "checklist"],
        conditions=["noisy"],
        scoring={"judge_attempts": 0, "k": 3},
        simulation={"language": "en"},
    )
    # a dialogue whose criterion id does not match its level
    rows = (tmp_path / "suite" / "dialogues.jsonl").read_text().splitlines()
    first = json.loads(rows[0])
    first["rubrics"]["general"][0]["id"] = "criteria_m_9"
    rows[0] = json.dumps(first)
    (tmp_path / "suite" / "dialogues.jsonl").write_text("\n".join(rows))
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    out = " ".join(result.output.split())
    assert "metrics.1: metric 'checklist' does not apply to the multi_turn protocol" in out
    assert "conditions.0: unknown condition 'noisy'" in out
    assert "scoring: judge_attempts" in out and "scoring: k" in out
    assert "simulation: the multi_turn protocol does not use this section" in out
    assert "criteria_m_9" in out and "not a general criterion" in out
