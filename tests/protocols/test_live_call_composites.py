"""Composites through real live-call runs with a loopback text judge and no audio judge:
summary.json carries EVA-X claimed with its curves and EVA-A not claimed, naming
agent_speech_fidelity, and the report shows the table; a system fault is a failed trial, a
unit that failed on our side leaves its condition unclaimed."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from tests.protocols import test_live_call_faults as faults
from tests.simulation.helpers import scenario, write_suite
from voxeval.cli.main import app
from voxeval.scoring.call_judges import conciseness, conversation_progression, faithfulness

TRIALS = 2
# The composites' components that can run on a text-mode call with a text judge, plus the ASR
# proxy (not run on text: no audio); agent_speech_fidelity needs an audio judge.
METRICS = ["task_completion", "faithfulness", "agent_speech_fidelity_asr",
           "conversation_progression", "turn_taking", "conciseness"]  # fmt: skip


def all_threes(path: str, body: dict[str, Any]) -> FakeResponse:
    """Every judged metric of the composites rated "no problem" on every dimension and turn
    (any other prompt is refused: the test asks for these metrics only)."""
    system, user = (str(m["content"]) for m in body["messages"][:2])
    turns = sorted({int(n) for n in re.findall(r"^\[agent turn (\d+)\]$", user, re.M)})
    answer: dict[str, Any]
    if system in (faithfulness.SYSTEM, conversation_progression.SYSTEM):
        module = faithfulness if system == faithfulness.SYSTEM else conversation_progression
        answer = {"dimensions": {d: {"rating": 3, "evidence": "-"} for d in module.DIMENSIONS}}
    elif system == conciseness.SYSTEM:
        answer = {"turns": [{"turn": t, "rating": 3, "failure_tags": []} for t in turns]}
    else:
        return FakeResponse(status=400, json_body={"error": {"message": "not a composite judge"}})
    return chat_text(json.dumps(answer))


def test_live_call_summary_claims_eva_x_and_not_eva_a(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", [scenario("book-1"), scenario("book-2")])
    out = tmp_path / "run"
    with FakeOpenAIServer(all_threes) as server:
        config = {
            "suite": str(suite),
            "systems": [{"name": "bot", "type": "scripted"}],
            "trials": TRIALS,
            "seed": 1,
            "metrics": METRICS,
            "judge": {"provider": "openai", "base_url": server.url, "model": "j",
                      "schema_retries": 0},
            "simulation": {"caller": "scripted", "mode": "text"},
        }  # fmt: skip
        path = tmp_path / "run.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        result = CliRunner().invoke(app, ["run", str(path), "--out", str(out)])
        assert result.exit_code == 0, result.output
    summary = json.loads((out / "report" / "summary.json").read_text())
    entry = summary["systems"]["bot"]
    assert entry["pass_definition"] == "a trial passes when task_completion == 1"  # kept
    composites = entry["composites"]
    assert list(composites) == ["eva_a", "eva_x", "eva_a_asr_proxy"]

    eva_x = composites["eva_x"]
    assert eva_x["claimed"] is True and eva_x["missing"] == {}
    clean = eva_x["by_condition"]["clean"]
    assert (clean["n_scenarios"], clean["n_trials"], clean["trials"]) == (2, TRIALS, 4)
    assert [p["k"] for p in clean["pass_at_k"]] == [1, 2] == [p["k"] for p in clean["pass_hat_k"]]
    # the judge rated everything 3, so EVA-X passes exactly when turn-taking does
    turn_taking = entry["overall"]["turn_taking"]
    assert 0.0 <= turn_taking["mean"] <= 1.0
    rows = [json.loads(p.read_text()) for p in sorted(out.rglob("scores.json"))]
    assert len(rows) == 4
    passing = [r["turn_taking"]["value"] >= 0.8 for r in rows]
    assert all(r["conciseness"]["value"] == 1.0 for r in rows)
    assert clean["passed_trials"] == sum(passing)
    assert clean["pass_at_1"]["mean"] == pytest.approx(sum(passing) / len(passing))

    eva_a = composites["eva_a"]
    assert eva_a["claimed"] is False
    assert "agent_speech_fidelity" in eva_a["missing"]
    missing = eva_a["missing"]["agent_speech_fidelity"]
    assert missing["trials"] == 4
    assert any("audio judge" in reason for reason in missing["reasons"])
    assert eva_a["by_condition"]["clean"]["pass_at_1"] is None
    proxy = composites["eva_a_asr_proxy"]
    assert proxy["claimed"] is False  # a text-mode call has no agent audio for the ASR
    assert "agent_speech_fidelity_asr" in proxy["missing"]

    report = (out / "report" / "summary.md").read_text()
    assert "### Composites (EVA-A / EVA-X)" in report
    assert "| composite | condition | pass@1 [95% CI] |" in report
    assert "| EVA-X | clean |" in report
    assert "| EVA-A | clean | not claimed |" in report
    assert "EVA-A, clean: agent_speech_fidelity did not run on 4 of 4 trials" in report
    assert "NOT EVA-A" in report
    html = (out / "report" / "index.html").read_text()
    assert "Composites (EVA-A / EVA-X)" in html


def _with_judge(config: Path, url: str) -> Path:
    data = yaml.safe_load(config.read_text())
    data["judge"] = {"provider": "openai", "base_url": url, "model": "j", "schema_retries": 0}
    data["metrics"] = METRICS
    config.write_text(yaml.safe_dump(data), encoding="utf-8")
    return config


def test_system_faults_fail_trials_and_our_failures_leave_the_composite_unclaimed(
    tmp_path: Path,
) -> None:
    crashing_out, breaking_out = tmp_path / "crashing", tmp_path / "breaking"
    with FakeOpenAIServer(all_threes) as server, FakeOpenAIServer(faults.caller_model) as caller:
        config = _with_judge(faults.write_config(tmp_path / "a", ["crashing"]), server.url)
        result = CliRunner().invoke(app, ["run", str(config), "--out", str(crashing_out)])
        assert result.exit_code == 1, result.output  # system faults, --max-failures 0
        # an LLM caller whose model answers nothing on one scenario: our side fails there
        caller_llm = {"provider": "openai", "base_url": caller.url, "model": "caller"}
        config = faults.write_config(tmp_path / "b", ["wrong-there"], caller_llm=caller_llm)
        args = ["run", str(_with_judge(config, server.url)), "--out", str(breaking_out)]
        result = CliRunner().invoke(app, [*args, "--retries", "0"])
        assert result.exit_code == 1, result.output  # our caller broke on one scenario

    # the agent crashed on one scenario of three (both trials): failed trials, still claimed
    eva_x = faults.summary(crashing_out)["systems"]["crashing"]["composites"]["eva_x"]
    clean = eva_x["by_condition"]["clean"]
    assert eva_x["claimed"] is True
    assert (clean["trials"], clean["system_fault_trials"], clean["passed_trials"]) == (6, 2, 4)
    assert clean["pass_at_1"]["mean"] == pytest.approx(2 / 3)
    assert [p["mean"] for p in clean["pass_hat_k"]] == pytest.approx([2 / 3, 2 / 3])

    # our caller broke on one scenario: those trials are not scored and nothing is claimed
    eva_x = faults.summary(breaking_out)["systems"]["wrong-there"]["composites"]["eva_x"]
    clean = eva_x["by_condition"]["clean"]
    assert eva_x["claimed"] is False and clean["pass_at_1"] is None
    assert eva_x["not_scored"]["trials"] == 2
    (reason,) = eva_x["not_scored"]["reasons"]
    assert reason.startswith("failed on our side (simulator)")
    assert "empty answer without ending the call" in reason
    report = (breaking_out / "report" / "summary.md").read_text()
    assert "EVA-X, clean: 2 of 6 planned trials not scored (the design is incomplete)" in report
