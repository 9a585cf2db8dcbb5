"""The single-turn checklist judge's settings: voxeval's own by default, the WildSpeech-Bench
reference setting (temperature 0.5, top_p 0.95, max_tokens 1024, one user message, the
three-point general checklist first, a final ``Score: N`` line) and a prompt file of the
user's; the report names the setting, the model and the sampling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer
from tests.runner.executor_world import World, run_cli, single_turn_config
from voxeval.cli.main import app
from voxeval.scoring.replies.checklist_settings import REFERENCE_GENERAL_CHECKLIST

N_QUERIES = 2  # of the world's six (``limit``): each reply's language is identified by Whisper


def judge_requests(server: FakeOpenAIServer) -> list[dict]:
    return [r.body for r in server.posts("/chat/completions")]


def checklist_values(run: Path) -> list[float]:
    return [
        json.loads(p.read_text())["checklist"]["value"] for p in sorted(run.rglob("scores.json"))
    ]


@pytest.mark.slow  # Whisper base identifies each reply's language
def test_default_setting_is_unchanged(tmp_path: Path) -> None:
    with FakeOpenAIServer(World()) as server:
        config = single_turn_config(tmp_path, server.url, metrics=["checklist"], limit=1)
        assert run_cli(config, tmp_path / "run").exit_code == 0
        body = judge_requests(server)[0]
    assert body["temperature"] == 0.0 and "top_p" not in body
    assert [m["role"] for m in body["messages"]] == ["system", "user"]


@pytest.mark.slow  # Whisper base identifies each reply's language
def test_reference_setting_samples_and_prompts_as_the_reference(tmp_path: Path) -> None:
    with FakeOpenAIServer(World()) as server:
        config = single_turn_config(
            tmp_path, server.url, metrics=["checklist"],
            scoring={"k": 1, "judge_protocol": "reference"}, limit=N_QUERIES,
        )  # fmt: skip
        result = run_cli(config, tmp_path / "run")
        assert result.exit_code == 0, result.output
        bodies = judge_requests(server)
    assert len(bodies) == N_QUERIES
    body = bodies[0]
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.5, 0.95, 1024)
    assert [m["role"] for m in body["messages"]] == ["user"]
    prompt = body["messages"][0]["content"]
    points = [*REFERENCE_GENERAL_CHECKLIST, "Gives the number of minutes"]
    positions = [prompt.index(f"- {p}") for p in points]
    assert positions == sorted(positions)  # the general points first, then the query's
    assert prompt.rstrip().endswith("Score: N")
    assert checklist_values(tmp_path / "run") == [4.0 + i % 5 for i in range(N_QUERIES)]
    summary = json.loads((tmp_path / "run" / "report" / "summary.json").read_text())
    setting = summary["systems"]["live"]["judge"]["setting"]
    assert setting["judge_protocol"] == "reference" and setting["model"] == "judge"
    assert (setting["temperature"], setting["top_p"], setting["max_tokens"]) == (0.5, 0.95, 1024)
    markdown = " ".join((tmp_path / "run" / "report" / "summary.md").read_text().split())
    assert (
        "judge setting reference: model judge, temperature 0.5, top_p 0.95, max_tokens 1024"
        in markdown
    )


@pytest.mark.slow  # Whisper base identifies each reply's language
def test_a_prompt_file_is_sent_as_written(tmp_path: Path) -> None:
    prompt = tmp_path / "my_judge.txt"
    prompt.write_text(
        'Q: {query}\nA: {response}\nPoints:\n{checklist}\nAnswer as {"score": N}? No:\nScore: N'
    )
    with FakeOpenAIServer(World()) as server:
        config = single_turn_config(
            tmp_path, server.url, metrics=["checklist"],
            scoring={"k": 1, "judge_protocol": "reference", "judge_prompt": "my_judge.txt"},
            limit=1,
        )  # fmt: skip
        result = run_cli(config, tmp_path / "run")
        assert result.exit_code == 0, result.output
        sent = judge_requests(server)[0]["messages"][0]["content"]
    assert sent.startswith("Q: Question 0?\nA: For question 0 the answer is 3 minutes.\nPoints:\n")
    assert f"- {REFERENCE_GENERAL_CHECKLIST[0]}" in sent
    assert sent.endswith('- Gives the number of minutes\nAnswer as {"score": N}? No:\nScore: N')
    setting = json.loads((tmp_path / "run" / "report" / "summary.json").read_text())
    assert setting["systems"]["live"]["judge"]["setting"]["prompt"] == str(prompt)


def test_a_prompt_file_without_its_placeholders_is_refused_at_validate(tmp_path: Path) -> None:
    (tmp_path / "bad.txt").write_text("Q: {query}\nA: {answer}\nScore: N")
    config = single_turn_config(
        tmp_path, "http://127.0.0.1:9/v1", metrics=["checklist"],
        scoring={"judge_prompt": "bad.txt"},
    )  # fmt: skip
    data = yaml.safe_load(config.read_text())
    assert data["scoring"]["judge_prompt"] == "bad.txt"
    result = CliRunner().invoke(app, ["validate", str(config)])
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert "judge_prompt" in text
    assert "missing {response}, {checklist}; unknown {answer}" in text
