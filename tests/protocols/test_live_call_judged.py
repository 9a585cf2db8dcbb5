"""A live-call run with a judge configured: the judged metrics score the recorded call
through the protocol (the loopback judge answers by metric with known ratings), with the
system's pipeline in the details."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from tests.simulation.helpers import scenario, write_suite
from voxeval.cli.main import app
from voxeval.scoring.call_judges import (
    conciseness,
    conversation_progression,
    faithfulness,
    speakability,
)
from voxeval.scoring.calls import user_behaviour

METRICS = ["task_completion", "faithfulness", "conversation_progression", "conciseness",
           "speakability"]  # fmt: skip


def _dims(names: tuple[str, ...], ratings: tuple[int, ...]) -> dict[str, Any]:
    pairs = zip(names, ratings, strict=True)
    return {"dimensions": {n: {"rating": r, "evidence": "-"} for n, r in pairs}}


def judge(path: str, body: dict[str, Any]) -> FakeResponse:
    system, user = (str(m["content"]) for m in body["messages"][:2])
    turns = sorted({int(n) for n in re.findall(r"^\[agent turn (\d+)\]$", user, re.M)})
    if system == faithfulness.SYSTEM:
        answer = _dims(faithfulness.DIMENSIONS, (3, 3, 2, 3, 3))  # -> 0.5
    elif system == conversation_progression.SYSTEM:
        answer = _dims(conversation_progression.DIMENSIONS, (3, 3, 3, 3))  # -> 1.0
    elif system == user_behaviour.SYSTEM:  # the simulation validation gate: a clean caller
        answer = {"corruption": {t: {"detected": False, "evidence": "-"}
                                 for t in user_behaviour.CORRUPTION_TYPES}}  # fmt: skip
    elif system == conciseness.SYSTEM:  # first turn 3, the rest 1
        answer = {"turns": [{"turn": t, "rating": 3 if t == turns[0] else 1, "failure_tags": []}
                            for t in turns]}  # fmt: skip
    else:
        assert system == speakability.SYSTEM
        answer = {"turns": [{"turn": t, "speakable": 1, "reason": ""} for t in turns]}
    return chat_text(json.dumps(answer))


def test_judged_metrics_score_a_recorded_call(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", [scenario("book-1")])
    with FakeOpenAIServer(judge) as server:
        config = {
            "suite": str(suite),
            "systems": [{"name": "bot", "type": "scripted"}],
            "trials": 1,
            "seed": 1,
            "metrics": METRICS,
            "judge": {"provider": "openai", "base_url": server.url, "model": "j",
                      "schema_retries": 0},
            "simulation": {"caller": "scripted", "mode": "text"},
        }  # fmt: skip
        path = tmp_path / "run.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        result = CliRunner().invoke(app, ["run", str(path), "--out", str(tmp_path / "run")])
        assert result.exit_code == 0, result.output
        # one judge call per metric, and one for the caller's behaviour (validation gate)
        assert len(server.posts("/chat/completions")) == 5
    (scores_file,) = (tmp_path / "run").rglob("scores.json")
    scores = json.loads(scores_file.read_text())
    assert scores["faithfulness"]["value"] == 0.5 and scores["faithfulness"]["passed"]
    assert scores["conversation_progression"]["value"] == 1.0
    n = scores["conciseness"]["details"]["agent_turns"]
    assert n >= 2
    assert scores["conciseness"]["value"] == (1.0 + 0.0 * (n - 1)) / n
    assert scores["speakability"]["value"] == 1.0
    assert scores["faithfulness"]["details"]["pipeline"] == "unknown"  # scripted agent
    assert scores["faithfulness"]["details"]["parse_failures"] == 0
    # the judge's calls (scoring and the validation gate) are in the unit's usage, per
    # component and per model
    usage = json.loads((tmp_path / "run" / "report" / "summary.json").read_text())["usage"]
    judge_usage = usage["by_provider"]["judge"]
    assert (judge_usage["calls"], judge_usage["requests"], judge_usage["prompt_tokens"]) == (
        5,
        5,
        50,
    )
    assert usage["by_model"]["llm:openai:j"]["prompt_tokens"] == 50


def test_judge_repeats_reach_the_variance_decomposition(tmp_path: Path) -> None:
    """Two scenarios x two trials, each call graded twice by a judge whose faithfulness
    rating alternates with the seed: the summary measures a judge component."""
    suite = write_suite(tmp_path / "suite", [scenario("book-1"), scenario("book-2")])

    def alternating(path: str, body: dict[str, Any]) -> FakeResponse:
        ratings = (3, 3, 3, 3, 3) if int(body.get("seed") or 0) < 100 else (2, 3, 3, 3, 3)
        return chat_text(json.dumps(_dims(faithfulness.DIMENSIONS, ratings)))

    with FakeOpenAIServer(alternating) as server:
        config = {
            "suite": str(suite),
            "systems": [{"name": "bot", "type": "scripted"}],
            "trials": 2,
            "seed": 1,
            "metrics": ["task_completion", "faithfulness"],
            "scoring": {"judge_repeats": 2},
            "concurrency": 1,
            "judge": {"provider": "openai", "base_url": server.url, "model": "j",
                      "schema_retries": 0},
            # this judge knows only faithfulness: no behaviour gate asks it
            "simulation": {"caller": "scripted", "mode": "text",
                           "validation": {"gates": ["valid_end"]}},
        }  # fmt: skip
        path = tmp_path / "run.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        result = CliRunner().invoke(app, ["run", str(path), "--out", str(tmp_path / "run")])
        assert result.exit_code == 0, result.output
        # every distinct call is graded twice (seeds 0 and 100); identical calls are
        # answered by the scoring cache
        seeds = [p.body["seed"] for p in server.posts("/chat/completions")]
        assert set(seeds) == {0, 100} and seeds.count(0) == seeds.count(100)
    summary = json.loads((tmp_path / "run" / "report" / "summary.json").read_text())
    components = summary["bot"]["variance_components"]
    assert components["judge_repeat"]["metrics"] == ["faithfulness"]
    faith = components["by_metric"]["faithfulness"]["clean"]
    # every call graded 1.0 then 0.5: judge variance (4 x 2 x 0.25^2) / 4 = 0.125, no other
    assert faith["judge_repeat"] == 0.125
    assert faith["between_scenarios"] == 0.0 and faith["within_scenario"] == 0.0
    assert faith["judge_share"] == 1.0
    assert "measured for faithfulness" in (tmp_path / "run" / "report" / "summary.md").read_text()
