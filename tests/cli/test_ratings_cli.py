"""``voxeval ratings FILE`` rates any battles file: the numbers are checked against hand
computations (online Elo replayed in the file's judging order, Bradley-Terry odds), FastChat's
field values and extra fields are read, a sweep is reported as unbounded, and errors name the
line and the field."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from voxeval.cli.main import app

runner = CliRunner()


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def rate(*args: str) -> dict[str, Any]:
    result = runner.invoke(app, ["ratings", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_csv_ratings_match_hand_computations(tmp_path: Path) -> None:
    # x beats y on q1, q2, q3; y beats x on q4; q5 a tie: x has 3.5 of 5
    def row(a: str, b: str, winner: str, item: str, len_a: int, len_b: int) -> dict[str, Any]:
        return {"model_a": a, "model_b": b, "winner": winner, "item": item,
                "length_a": len_a, "length_b": len_b}  # fmt: skip

    rows = [
        row("x", "y", "model_a", "q1", 10, 5),
        row("y", "x", "model_b", "q2", 4, 12),
        row("x", "y", "model_a", "q3", 9, 9),
        row("x", "y", "model_b", "q4", 3, 8),
        row("y", "x", "tie (bothbad)", "q5", 6, 6),
    ]
    data = rate(str(write_csv(tmp_path / "battles.csv", rows)), "--resamples", "200")
    assert data["battles"] == 5 and data["features"] == ["length"]
    (summary,) = data["dimensions"].values()
    # online Elo in file order, K 4, from 1000
    x = y = 1000.0
    for score_x in (1.0, 1.0, 1.0, 0.0, 0.5):
        e = 1 / (1 + 10 ** ((y - x) / 400))
        x, y = x + 4 * (score_x - e), y - 4 * (score_x - e)
    assert summary["elo"]["x"] == pytest.approx(x, abs=1e-9)
    assert summary["elo_intervals"]["systems"]["x"]["rating"] == pytest.approx(x, abs=1e-9)
    # Bradley-Terry, a tie as half a win: odds 3.5 : 1.5, gap 400 log10(7/3)
    bt = summary["bt"]["systems"]
    assert bt["x"]["rating"] - bt["y"]["rating"] == pytest.approx(
        400 * math.log10(3.5 / 1.5), abs=0.5
    )
    assert summary["bt"]["clusters"] == 5
    assert summary["style_controlled"]["features_used"] == ["length"]
    assert summary["win_matrix"]["x"]["y"] == {
        "wins": 3, "ties": 1, "losses": 1, "n": 5, "win_rate": 0.7
    }  # fmt: skip


def test_fastchat_jsonl_fields_and_judging_order(tmp_path: Path) -> None:
    # written out of order; tstamp gives the judging order: y wins first, then x twice
    lines = [
        {"model_a": "x", "model_b": "y", "winner": "model_a", "question_id": "q1",
         "tstamp": 30.0, "judge": "arena_user_1", "anony": True, "language": "English"},
        {"model_a": "x", "model_b": "y", "winner": "model_b", "question_id": "q2",
         "tstamp": 10.0, "judge": "arena_user_2", "anony": True, "language": "English"},
        {"model_a": "y", "model_b": "x", "winner": "x", "question_id": "q3",
         "tstamp": 20.0, "judge": "arena_user_3", "anony": True, "language": "English"},
    ]  # fmt: skip
    path = tmp_path / "battles.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    data = rate(str(path), "--resamples", "50")
    assert data["ignored_fields"] == ["anony", "judge", "language"]
    x = y = 1000.0
    for score_x in (0.0, 1.0, 1.0):  # by tstamp
        e = 1 / (1 + 10 ** ((y - x) / 400))
        x, y = x + 4 * (score_x - e), y - 4 * (score_x - e)
    assert data["dimensions"][""]["elo"]["x"] == pytest.approx(x, abs=1e-9)


def test_a_sweep_in_a_file_is_printed_as_unbounded(tmp_path: Path) -> None:
    rows = [{"model_a": "x", "model_b": "y", "winner": "x", "dimension": "semantic"}] * 4
    path = write_csv(tmp_path / "sweep.csv", rows)
    result = runner.invoke(app, ["ratings", str(path), "--resamples", "50"], env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert "unbounded (won every battle)" in result.stdout
    assert "unbounded (lost every battle)" in result.stdout
    data = rate(str(path), "--resamples", "50", "--elo-point", "median")
    x = data["dimensions"]["semantic"]["elo_intervals"]["systems"]["x"]
    assert x["ci_low"] is None and x["unbounded"].startswith("won every battle")


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"model_a": "x", "model_b": "y", "winner": "z"}, "battles.csv:2: field 'winner' is 'z'"),
        ({"model_a": "x", "model_b": "", "winner": "a"}, "battles.csv:2: field 'model_b'"),
        ({"model_a": "x", "model_b": "x", "winner": "a"}, "name the same system"),
        ({"model_a": "x", "model_b": "y", "winner": "a", "length_a": "long", "length_b": 3},
         "battles.csv:2: field 'length_a' must be a number"),
    ],
)  # fmt: skip
def test_errors_name_the_line_and_field(tmp_path: Path, row: dict[str, Any], message: str) -> None:
    path = write_csv(tmp_path / "battles.csv", [row])
    result = runner.invoke(app, ["ratings", str(path)])
    assert result.exit_code != 0
    assert message in " ".join(result.output.split())
