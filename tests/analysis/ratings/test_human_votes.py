from __future__ import annotations

import json
from pathlib import Path

import pytest

from voxeval.analysis.agreement.preference_bias import position_bias
from voxeval.analysis.ratings.human_votes import load_rubric_values, load_votes
from voxeval.analysis.ratings.pairwise_judgement import PairwiseJudgement
from voxeval.analysis.rubric_values import RubricValue, case_scores
from voxeval.errors import ConfigError

HEADER = "rater,item,first,second,winner,first_length,second_length,dimension\n"


def test_csv_votes_load_and_feed_the_bias_analysis(tmp_path: Path) -> None:
    path = tmp_path / "votes.csv"
    path.write_text(
        HEADER
        + "ann,3-2,gpt,qwen,gpt,12,30,semantic\n"
        + "ann,3-2,qwen,gpt,tie,,,\n"
        + "bob,1-1,qwen,gpt,gpt,4.5,2,\n"
    )
    votes = load_votes(path)
    assert votes[0] == PairwiseJudgement("ann", "3-2", "gpt", "qwen", "gpt", 12.0, 30.0, "semantic")
    assert votes[1].is_tie and votes[1].first_length is None and votes[1].dimension is None
    assert votes[2].winner == "gpt" and not votes[2].first_won
    result = position_bias(votes, cluster_of=None)
    assert (result["n"], result["n_ties"]) == (2, 1)
    assert result["p1"]["rate"] == pytest.approx(0.5)


def test_jsonl_votes_load(tmp_path: Path) -> None:
    path = tmp_path / "votes.jsonl"
    rows = [
        {"rater": "ann", "item": "a", "first": "x", "second": "y", "winner": "y"},
        {"rater": "ann", "item": "b", "first": "y", "second": "x", "winner": "tie",
         "first_length": 3, "second_length": 9},
    ]  # fmt: skip
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    votes = load_votes(path)
    assert [v.winner for v in votes] == ["y", None]
    assert votes[1].second_length == 9.0


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("ann,1,x,y,z,,,", "votes.csv:3: field 'winner' is 'z'"),
        ("ann,1,x,x,x,,,", "votes.csv:3: fields 'first' and 'second'"),
        (",1,x,y,x,,,", "votes.csv:3: field 'rater' is missing"),
        ("ann,1,x,y,x,ten,3,", "votes.csv:3: field 'first_length' must be a number"),
        ("ann,1,x,y,x,-1,3,", "votes.csv:3: field 'first_length' must be a finite length"),
        ("ann,1,x,y,x,4,,", "votes.csv:3: fields 'first_length' and 'second_length'"),
        ("ann,1,x,y,x,4,5,sem,extra", "votes.csv:3: more values"),
    ],
)
def test_csv_errors_name_file_line_and_field(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "votes.csv"
    path.write_text(HEADER + "ann,0,x,y,x,,,\n" + line + "\n")
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        load_votes(path)


def test_jsonl_errors(tmp_path: Path) -> None:
    path = tmp_path / "votes.jsonl"
    path.write_text('{"rater": "a", "item": "1", "first": "x", "second": "y", "winer": "x"}\n')
    with pytest.raises(ConfigError, match=r"votes\.jsonl:1: unknown field\(s\) \['winer'\]"):
        load_votes(path)
    path.write_text('\n{"rater": "a",\n')
    with pytest.raises(ConfigError, match=r"votes\.jsonl:2: not JSON"):
        load_votes(path)
    path.write_text("[1, 2]\n")
    with pytest.raises(ConfigError, match="JSON object"):
        load_votes(path)
    with pytest.raises(ConfigError, match=r"votes\.txt: records must be in a \.csv or \.jsonl"):
        (tmp_path / "votes.txt").write_text("x")
        load_votes(tmp_path / "votes.txt")
    with pytest.raises(ConfigError, match="no such file"):
        load_votes(tmp_path / "missing.csv")


def test_judgement_record_refuses_a_winner_outside_the_pair() -> None:
    with pytest.raises(ValueError, match="winner 'z'"):
        PairwiseJudgement("r", "i", "x", "y", "z")
    with pytest.raises(ValueError, match="cannot face itself"):
        PairwiseJudgement("r", "i", "x", "x", None)
    judgement = PairwiseJudgement("r", "i", "y", "x", "x")
    assert judgement.pair == ("x", "y")
    assert (judgement.score_of("x"), judgement.score_of("y")) == (1.0, 0.0)


def test_rubric_values_load_from_csv_and_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "rubrics.csv"
    path.write_text(
        "rater,item,system,criterion,value\n"
        "ann,3-2,gpt,criteria_s_1,1\n"
        "ann,3-2,gpt,criteria_d_1,false\n"
    )
    values = load_rubric_values(path)
    assert values[0] == RubricValue("ann", "3-2", "gpt", "criteria_s_1", 1)
    assert case_scores(values) == {("ann", "3-2", "gpt"): 0.5}
    jsonl = tmp_path / "rubrics.jsonl"
    jsonl.write_text(
        '{"rater": "a", "item": "1", "system": "x", "criterion": "c", "value": true}\n'
        '{"rater": "a", "item": "1", "system": "x", "criterion": "d", "value": 0.5}\n'
    )
    with pytest.raises(ConfigError, match=r"rubrics\.jsonl:2: field 'value' must be 1 or 0"):
        load_rubric_values(jsonl)
