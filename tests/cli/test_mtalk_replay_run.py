"""The released MTalk-Bench layouts, end to end with zero hand edits: the test writes a
release in each reference layout, ``voxeval mtalk-suite`` turns it into a suite folder with
replay systems, a run config placed in that folder names those systems and a loopback judge,
and ``voxeval run`` judges the released replies in the arena (both orders) and on the rubrics.

The judge prefers GPT-4o's dialogues, except on dialogue 3-2, where it always answers "A" (so
the two orders disagree and the comparison is a tie). On the rubrics GPT-4o meets every
criterion and Qwen-Omni only the general ones (``criteria_s_N``). Every expected number below
is worked out by hand in its comment."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from tests.benchmarks.mtalk_fixtures import write_dataset_jsonl, write_model_outputs
from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from voxeval.cli.main import app

runner = CliRunner()
ARENA_SYSTEM = "You compare two spoken dialogue systems"


def judge(path: str, body: dict[str, Any]) -> FakeResponse:
    system, prompt = body["messages"][0]["content"], body["messages"][1]["content"]
    if system.startswith(ARENA_SYSTEM):
        if "of 3-2" in prompt:
            winner = "A"  # position bias: the orders disagree, a tie
        else:
            winner = "A" if prompt.index("GPT-4o") < prompt.index("Qwen-Omni") else "B"
        return chat_text(json.dumps({"winner": winner, "reason": "kept the thread"}))
    ids = re.findall(r"^\s+(criteria_[smd]_\d+):", prompt, re.M)
    qwen = "Qwen-Omni" in prompt
    answer = {cid: int(not qwen or cid.startswith("criteria_s_")) for cid in ids}
    return chat_text(json.dumps(answer))


def run_release(release: Path, tmp_path: Path, url: str) -> tuple[int, dict[str, Any], Path, str]:
    """mtalk-suite, then a run config next to the written systems.yaml, then voxeval run."""
    suite = tmp_path / "suite"
    imported = runner.invoke(app, ["mtalk-suite", str(release), "-o", str(suite)])
    assert imported.exit_code == 0, imported.output
    snippet = yaml.safe_load((suite / "systems.yaml").read_text(encoding="utf-8"))
    config = {
        "suite": ".",
        **snippet,
        "judge": {"provider": "openai", "base_url": url, "model": "judge"},
        "cache_dir": str(tmp_path / "cache"),
        # one comparison at a time: the online Elo follows the judging order
        "concurrency": 1,
    }
    (suite / "run.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    out = tmp_path / "run"
    result = runner.invoke(app, ["run", str(suite / "run.yaml"), "--out", str(out)])
    summary = json.loads((out / "report" / "summary.json").read_text(encoding="utf-8"))
    return result.exit_code, summary, out, " ".join(imported.output.split())


def bt_rating(theta: float) -> float:
    return 400 * theta / math.log(10) + 1000


def test_model_outputs_layout_runs_arena_and_says_rubrics_did_not_run(tmp_path: Path) -> None:
    release = write_model_outputs(tmp_path / "release")
    with FakeOpenAIServer(judge) as server:
        code, summary, _, imported = run_release(release, tmp_path, server.url)
        systems = [p.body["messages"][0]["content"] for p in server.posts()]
    rubric_calls = [s for s in systems if not s.startswith(ARENA_SYSTEM)]
    assert code == 0
    assert "0 problems" in imported and "no released reply" not in imported
    assert len(systems) == 8  # 4 comparisons x 2 orders
    # sample.json carries no rubric prompts: no criteria, so rubrics are not run (and the
    # judge is never asked), with the reason
    assert rubric_calls == []
    for name in ("GPT-4o", "Qwen-Omni"):
        entry = summary["systems"][name]
        assert entry["units"]["done"] == 4 and entry["units"]["failed"] == 0
        assert entry["not_run"]["rubric"] == "dialogue 'sem-1-1' has no accepted criteria"
        assert "no accepted general or dimension criteria" in entry["not_run"]["rubric_turns"]
        assert entry["overall"] == {}

    dims = summary["arena"]["dimensions"]
    assert set(dims) == {"semantic", "paralinguistic", "ambient"}
    assert summary["comparisons"]["arena"]["done"] == 4
    # semantic: 1-1 won by GPT-4o in both orders, 3-2 a tie (orders disagree)
    sem = dims["semantic"]
    assert (sem["n_battles"], sem["ties"]) == (2, 1)
    assert sem["comparisons"]["order_disagreements"] == 1
    # online Elo, K 4, 1-1 first: GPT-4o 1000 + 4 x 0.5 = 1002; then the tie with expected
    # score e = 1 / (1 + 10^(-4/400)): GPT-4o 1002 + 4 x (0.5 - e)
    e = 1 / (1 + 10 ** (-4 / 400))
    assert sem["elo"]["GPT-4o"] == pytest.approx(1002 + 4 * (0.5 - e), abs=1e-6)
    assert sem["elo"]["Qwen-Omni"] == pytest.approx(998 - 4 * (0.5 - e), abs=1e-6)
    # BT with the tie as half a win: 1.5 of 2 -> p = 0.75, theta gap ln 3, centred at 1000
    bt = sem["bt"]["systems"]
    assert bt["GPT-4o"]["rating"] == pytest.approx(bt_rating(math.log(3) / 2), abs=0.5)
    assert bt["Qwen-Omni"]["rating"] == pytest.approx(bt_rating(-math.log(3) / 2), abs=0.5)
    # bootstrap over the 2 dialogues: {3-2, 3-2} (a quarter of the rounds) is all ties, so
    # 1000 each, the low end of GPT-4o's interval; {1-1, 1-1} (a quarter) is a sweep whose
    # gap only the ridge bounds, the high end; so the intervals overlap and the rank
    # intervals are [1, 2] for both (no lower bound exceeds the other's upper bound)
    assert bt["GPT-4o"]["ci_low"] == pytest.approx(1000.0, abs=1e-6)
    assert bt["Qwen-Omni"]["ci_high"] == pytest.approx(1000.0, abs=1e-6)
    assert bt["GPT-4o"]["ci_high"] > bt["GPT-4o"]["rating"] + 300
    assert bt["GPT-4o"]["ci_high"] - 1000 == pytest.approx(1000 - bt["Qwen-Omni"]["ci_low"])
    for name in ("GPT-4o", "Qwen-Omni"):
        assert (bt[name]["rank"], bt[name]["rank_low"], bt[name]["rank_high"]) == (1, 1, 2)
    assert (sem["bt"]["clusters"], sem["bt"]["resamples"]) == (2, 1000)
    assert "style_controlled" in sem  # beside the raw ratings
    assert sem["win_matrix"]["GPT-4o"]["Qwen-Omni"]["wins"] == 1
    assert sem["win_matrix"]["GPT-4o"]["Qwen-Omni"]["ties"] == 1
    for name in ("paralinguistic", "ambient"):
        part = dims[name]  # one battle, GPT-4o won both orders
        assert part["elo"] == {"GPT-4o": 1002.0, "Qwen-Omni": 998.0}
        assert part["win_matrix"]["GPT-4o"]["Qwen-Omni"]["win_rate"] == 1.0
        # a clean sweep has no finite maximum-likelihood gap: said, not hidden
        assert part["bt"]["unbounded"] == ["GPT-4o", "Qwen-Omni"]
        assert (
            part["bt"]["systems"]["GPT-4o"]["rating"] > part["bt"]["systems"]["Qwen-Omni"]["rating"]
        )


def test_dataset_layout_runs_arena_and_rubrics(tmp_path: Path) -> None:
    release = write_dataset_jsonl(tmp_path / "release")
    with FakeOpenAIServer(judge) as server:
        code, summary, out, imported = run_release(release, tmp_path, server.url)
    gpt, qwen = summary["systems"]["GPT-4o"], summary["systems"]["Qwen-Omni"]

    # para-2-3 has 5 criteria: s_1, s_2 (general), m_1 (dimension), d_1, d_2 (sample)
    assert gpt["rubric"]["model_score"]["mean"] == pytest.approx(100.0)
    assert qwen["rubric"]["model_score"]["mean"] == pytest.approx(100 * 2 / 5)
    assert qwen["overall"]["rubric"]["mean"] == pytest.approx(2 / 5)
    levels = qwen["rubric"]["by_level"]
    assert levels["general"]["mean"] == pytest.approx(100.0)
    assert levels["dimension"]["mean"] == pytest.approx(0.0)
    assert levels["sample"]["mean"] == pytest.approx(0.0)
    # turn level uses general + dimension criteria: 2 of 3 on T1 and on T2
    assert qwen["rubric"]["turns"]["T1"]["mean"] == pytest.approx(100 * 2 / 3)
    assert qwen["rubric"]["turns"]["T2"]["mean"] == pytest.approx(100 * 2 / 3)
    assert gpt["rubric"]["turns"]["T2"]["mean"] == pytest.approx(100.0)
    assert gpt["judge"]["parse_failures"] == 0 and qwen["judge"]["parse_failures"] == 0
    scores = json.loads(
        (out / "items" / "para-2-3" / "Qwen-Omni" / "0" / "scores.json").read_text()
    )
    assert scores["rubric"]["details"]["criteria"] == {
        "criteria_s_1": 1, "criteria_s_2": 1, "criteria_m_1": 0, "criteria_d_1": 0,
        "criteria_d_2": 0,
    }  # fmt: skip

    # the arena: para-2-3 won by GPT-4o in both orders
    para = summary["arena"]["dimensions"]["paralinguistic"]
    assert para["elo"] == {"GPT-4o": 1002.0, "Qwen-Omni": 998.0}
    assert para["win_matrix"]["GPT-4o"]["Qwen-Omni"]["wins"] == 1

    # amb-9-1 is in the release as questions only: no model has a reply to replay. The import
    # says so; its units fail on our side (input), are listed, and the run exits 1
    for model in ("GPT-4o", "Qwen-Omni"):
        assert f"{model}: no released reply to every turn of 1 dialogue(s) (amb-9-1)" in imported
    report = json.loads((tmp_path / "suite" / "import.json").read_text(encoding="utf-8"))
    assert report["unanswered"] == {"GPT-4o": ["amb-9-1"], "Qwen-Omni": ["amb-9-1"]}
    assert code == 1
    for entry in (gpt, qwen):
        assert entry["units"]["failed"] == 1
        assert entry["units"]["failed_by_cause"] == {"input": 1}
    assert summary["comparisons"]["arena"]["not_run"] == 1
