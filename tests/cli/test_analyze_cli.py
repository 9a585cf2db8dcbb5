"""``voxeval analyze bias|agreement RUN`` over a run folder whose arena comparisons were judged
by a loopback judge (prefers "good" replies, says A when both are poor), with rubric scores and
imported human votes; the rates are checked against counts made by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer
from tests.protocols.arena_runs import arena_context, preferring_judge
from voxeval.cli.main import app
from voxeval.protocols.multi_turn_arena import ARENA, arena_comparisons, compare_arena

runner = CliRunner()

# alpha's replies are longer; d1, d2: alpha is good, beta poor; d3: both poor (the judge
# then picks whoever is shown first)
REPLIES = {
    ("d1", "alpha"): ["a good long answer here"],
    ("d1", "beta"): ["poor"],
    ("d2", "alpha"): ["a good long answer here"],
    ("d2", "beta"): ["poor"],
    ("d3", "alpha"): ["poor reply"],
    ("d3", "beta"): ["poor"],
}
RUBRIC = {(d, "alpha"): 1.0 for d in ("d1", "d2", "d3")} | {
    (d, "beta"): 0.0 for d in ("d1", "d2", "d3")
}


@pytest.fixture
def judged_run(tmp_path: Path) -> Path:
    with FakeOpenAIServer(preferring_judge) as server:
        ctx, units = arena_context(tmp_path, REPLIES, judge_url=server.url, rubric=RUBRIC)
        for comparison in arena_comparisons(ctx, units):
            result = compare_arena(comparison, ctx)
            assert result.is_done
            ctx.store.comparisons.save(ARENA, comparison.key, comparison.unit_keys, result)
    ctx.store.close()
    return ctx.store.run_dir


def invoke(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_bias_counts_position_and_length_preferences(judged_run: Path) -> None:
    data = invoke("analyze", "bias", str(judged_run), "--json")
    assert data["n_judgements"] == 6  # 3 comparisons x 2 orders
    judge = data["all"]["raters"]["llm:judge"]
    # top won: d1 and d2 once each (alpha wins in both orders), d3 twice
    assert judge["position"]["p1"]["rate"] == pytest.approx(4 / 6)
    assert judge["position"]["delta"] == pytest.approx(4 / 6 - 2 / 6)
    assert judge["position"]["n"] == 6
    # the longer reply (alpha's) won 4 times in d1, d2 and once in d3
    assert judge["length"]["p1"]["rate"] == pytest.approx(5 / 6)
    assert judge["length"]["delta"] == pytest.approx(4 / 6)
    assert set(data["dimensions"]) == {"ambient"}
    assert (judged_run / "report" / "judge_bias.json").is_file()


def test_bias_table_is_printed(judged_run: Path) -> None:
    result = runner.invoke(app, ["analyze", "bias", str(judged_run)])
    assert result.exit_code == 0, result.output
    assert "llm:judge" in result.stdout and "position" in result.stdout


def test_agreement_with_rubric_scores_and_human_votes(judged_run: Path, tmp_path: Path) -> None:
    votes = tmp_path / "votes.csv"
    rows = ["rater,item,first,second,winner,dimension"]
    for item in ("d1", "d2", "d3"):
        rows += [f"ann,{item},alpha,beta,alpha,ambient", f"ann,{item},beta,alpha,alpha,ambient"]
    votes.write_text("\n".join(rows) + "\n", encoding="utf-8")
    data = invoke("analyze", "agreement", str(judged_run), "--votes", str(votes), "--json")
    kappa = data["all"]["arena_vs_rubric"]["llm:judge"]
    # the rubric always prefers alpha; the arena agrees except in d3's order where beta is top
    assert kappa["n"] == 6
    assert kappa["agreement"] == pytest.approx(5 / 6)
    pseudo = data["all"]["pseudo_agreement"]["llm:judge"]["pairs"][0]
    # human: alpha wins all 6; judge: alpha wins 5 of 6
    assert pseudo["p_human"] == pytest.approx(1.0)
    assert pseudo["p_llm"] == pytest.approx(5 / 6)
    assert pseudo["pseudo_agreement"] == pytest.approx(5 / 6)
    assert (judged_run / "report" / "judge_agreement.json").is_file()


def test_a_folder_that_is_not_a_run_is_an_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["analyze", "bias", str(tmp_path)])
    assert result.exit_code == 2
    assert "not a voxeval run folder" in " ".join(result.output.split())
