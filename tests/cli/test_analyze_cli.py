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
from tests.protocols.arena.arena_runs import arena_context, preferring_judge
from voxeval.cli.main import app
from voxeval.protocols.arena.multi_turn_arena import ARENA, arena_comparisons, compare_arena

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


@pytest.fixture
def criteria_run(tmp_path: Path) -> Path:
    """The judged run, its rubric scores carrying per-criterion values: alpha meets both
    criteria of every dialogue, beta none."""
    criteria = {(d, "alpha"): {"criteria_s_1": 1, "criteria_d_1": 1} for d in ("d1", "d2", "d3")}
    criteria |= {(d, "beta"): {"criteria_s_1": 0, "criteria_d_1": 0} for d in ("d1", "d2", "d3")}
    with FakeOpenAIServer(preferring_judge) as server:
        ctx, units = arena_context(
            tmp_path, REPLIES, judge_url=server.url, rubric_criteria=criteria
        )
        for comparison in arena_comparisons(ctx, units):
            result = compare_arena(comparison, ctx)
            assert result.is_done
            ctx.store.comparisons.save(ARENA, comparison.key, comparison.unit_keys, result)
    ctx.store.close()
    return ctx.store.run_dir


def test_agreement_runs_the_rubric_exclusion_on_the_runs_criteria(criteria_run: Path) -> None:
    data = invoke(
        "analyze", "agreement", str(criteria_run), "--exclusion-resamples", "300", "--json"
    )
    part = data["rubric_exclusion"]["llm:judge"]
    assert part["n_values"] == 12  # 3 dialogues x 2 systems x 2 criteria
    assert part["arena_rating"] == "llm:judge bradley_terry"
    curve = part["curve"]
    assert [step["fraction"] for step in curve] == [0.1, 0.2, 0.3, 0.4, 0.5]
    # 6 units (dialogue x criterion); round(share x 6) of them dropped, at least 1
    assert [step["dropped_per_resample"] for step in curve] == [1, 1, 2, 2, 3]
    for step in curve:
        assert step["full_scores"] == {"alpha": 1.0, "beta": 0.0}
        # whatever is dropped alpha keeps 1 and beta 0: the ranking never changes
        assert step["vs_full"] == {"mean": 1.0, "ci_low": 1.0, "ci_high": 1.0, "n_defined": 300}
        # two systems only: no Spearman against the arena (3 needed)
        assert step["vs_arena"]["systems"] == ["alpha", "beta"]
        assert step["vs_arena"]["mean"] is None
    # the case scores (means of the criteria) still drive the kappa: alpha always preferred
    assert data["all"]["arena_vs_rubric"]["llm:judge"]["agreement"] == pytest.approx(5 / 6)


def test_agreement_takes_human_rubric_votes(criteria_run: Path, tmp_path: Path) -> None:
    votes = tmp_path / "rubric_votes.csv"
    rows = ["rater,item,system,criterion,value"]
    # ann: alpha meets everything, beta nothing, gamma all but criteria_d_1 of d2
    for item in ("d1", "d2", "d3"):
        for criterion in ("criteria_s_1", "criteria_d_1"):
            gamma = 0 if (item, criterion) == ("d2", "criteria_d_1") else 1
            rows += [
                f"ann,{item},alpha,{criterion},1",
                f"ann,{item},beta,{criterion},0",
                f"ann,{item},gamma,{criterion},{gamma}",
            ]
    votes.write_text("\n".join(rows) + "\n", encoding="utf-8")
    data = invoke(
        "analyze", "agreement", str(criteria_run), "--rubric-votes", str(votes),
        "--exclusion-resamples", "2000", "--json",
    )  # fmt: skip
    ann = data["rubric_exclusion"]["ann"]
    assert ann["n_values"] == 18
    # ann gave no arena votes: the run judge's Bradley-Terry is the arena ranking
    assert ann["arena_rating"] == "llm:judge bradley_terry"
    first = ann["curve"][0]  # 10%: one of the 6 (dialogue, criterion) units dropped
    assert first["full_scores"] == pytest.approx({"alpha": 1.0, "beta": 0.0, "gamma": 5 / 6})
    # dropping d2/criteria_d_1 (chance 1/6) ties gamma with alpha: ranks (2.5, 1, 2.5) vs
    # (3, 1, 2) give rho = 1.5 / sqrt(2 x 1.5) = sqrt(3)/2; any other drop keeps rho = 1
    tie_rho = 3**0.5 / 2
    assert first["vs_full"]["ci_low"] == pytest.approx(tie_rho)
    assert first["vs_full"]["ci_high"] == pytest.approx(1.0)
    assert first["vs_full"]["mean"] == pytest.approx(1 - (1 - tie_rho) / 6, abs=0.005)
    # the run's own rubric is still analysed, and ann's rubric ranking joins the rankings
    assert "llm:judge" in data["rubric_exclusion"]
    rankings = data["all"]["rankings"]
    assert "ann rubric vs llm:judge bradley_terry" in rankings


def test_agreement_without_criteria_says_the_exclusion_did_not_run(judged_run: Path) -> None:
    data = invoke("analyze", "agreement", str(judged_run), "--json")
    assert data["rubric_exclusion"] == {
        "not_run": "no per-criterion rubric values in the run or --rubric-votes"
    }


def test_agreement_table_shows_the_exclusion(criteria_run: Path) -> None:
    result = runner.invoke(
        app, ["analyze", "agreement", str(criteria_run), "--exclusion-resamples", "50"]
    )
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.replace("│", " ").split())
    assert "Bootstrap rubric exclusion" in text
    assert "llm:judge 10.0 1.000 [1.000, 1.000]" in text  # rho 1 whatever is dropped


def test_bias_on_three_dialogues_says_the_test_cannot_decide(judged_run: Path) -> None:
    data = invoke("analyze", "bias", str(judged_run), "--json")
    position = data["all"]["raters"]["llm:judge"]["position"]
    assert position["decidable"] is False and position["significant"] is None
    assert "at least 6" in position["note"]
    result = runner.invoke(app, ["analyze", "bias", str(judged_run)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    said = " ".join(result.stdout.split())  # the console may wrap at its own width
    assert "cannot decide" in said
    assert "fewer than 6 dialogues" in said
