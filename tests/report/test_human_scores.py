"""Human-score validation: Pearson/Spearman against a hand computation, and file errors that
name the file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from voxeval.analysis.agreement.agreement import correlation_stats
from voxeval.errors import ConfigError
from voxeval.report.human_scores import human_validation, read_human_scores
from voxeval.store.records import ScoreRow

JUDGE = {"q1__v__clean": 8.0, "q2__v__clean": 6.0, "q3__v__clean": 2.0, "q4__v__clean": 5.0}
CATEGORY = {"q1__v__clean": "II", "q2__v__clean": "II", "q3__v__clean": "SR"}


def rows() -> list[ScoreRow]:
    return [
        ScoreRow(item, "s", 0, "clean", CATEGORY.get(item, "SR"), "checklist", v, None, None)
        for item, v in JUDGE.items()
    ]


def test_golden_pearson_and_spearman(tmp_path: Path) -> None:
    path = tmp_path / "human.csv"
    path.write_text(
        "item_id,score\nq1__v__clean,9\nq2__v__clean,5\nq3__v__clean,3\nq4__v__clean,7\n"
    )
    queries = {item: item.split("__")[0] for item in JUDGE}
    result = human_validation(path, read_human_scores(path), rows(), queries, seed=0)
    overall = result["overall"]
    # human 9,5,3,7 vs judge 8,6,2,5: means 6 and 5.25; sum of products of deviations
    # 3*2.75 + -1*0.75 + -3*-3.25 + 1*-0.25 = 17; sums of squares 20 and 18.75
    assert overall["pearson"]["r"] == pytest.approx(17 / (20 * 18.75) ** 0.5)
    # ranks 4,2,1,3 vs 4,3,1,2: d^2 = 0+1+0+1 = 2 -> 1 - 6*2/(4*15) = 0.8
    assert overall["spearman"]["r"] == pytest.approx(0.8)
    assert overall["n"] == 4 and overall["clusters"] == 4
    low, high = overall["pearson"]["ci_low"], overall["pearson"]["ci_high"]
    assert low is not None and low <= overall["pearson"]["r"] <= high
    assert result["by_category"]["II"]["n"] == 2
    assert result["by_category"]["II"]["pearson"]["r"] is None  # two pairs: not enough


def test_errors_name_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "human.jsonl"
    path.write_text('{"item_id": "q1__v__clean", "score": 9}\n{"item_id": "q2", "score": 11}\n')
    with pytest.raises(ConfigError, match=r"human.jsonl: line 2: field score: 11 is outside"):
        read_human_scores(path)
    path.write_text('{"item_id": "nope", "score": 9}\n')
    with pytest.raises(ConfigError, match=r"line 1: field item_id: 'nope' has no checklist"):
        human_validation(path, read_human_scores(path), rows(), {})
    bad = tmp_path / "h.csv"
    bad.write_text("item,score\nq1,3\n")
    with pytest.raises(ConfigError, match=r"h.csv: line 1: header lacks item_id"):
        read_human_scores(bad)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(-100, 100), min_size=3, max_size=12, unique=True),
    st.floats(0.1, 10),
    st.floats(-5, 5),
)
def test_a_positive_linear_map_correlates_perfectly(
    xs: list[int], scale: float, shift: float
) -> None:
    result = correlation_stats(xs, [scale * x + shift for x in xs], resamples=50)
    assert result["pearson"]["r"] == pytest.approx(1.0)
    assert result["spearman"]["r"] == pytest.approx(1.0)


# -- issue 37, point 19: say what is missing -------------------------------------------------


def _run(tmp_path: Path, metrics: list[str], limit: int) -> tuple[Path, dict[str, str]]:
    """A single-turn run of the scripted world's first ``limit`` queries; returns it and
    the rendered item id of each query (``q0`` -> ``q0__...``)."""
    from tests.fakes.openai_server import FakeOpenAIServer
    from tests.runner.executor_world import World, index_rows, run_cli, single_turn_config

    with FakeOpenAIServer(World()) as server:
        config = single_turn_config(tmp_path, server.url, metrics=metrics, limit=limit)
        result = run_cli(config, tmp_path / "run")
    assert result.exit_code == 0, result.output
    items = [row[0] for row in index_rows(tmp_path / "run", "SELECT item_id FROM units")]
    return tmp_path / "run", {item.split("__")[0]: item for item in items}


@pytest.mark.slow  # a run of its own
def test_human_scores_on_a_run_without_checklist_scores_says_how_to_get_them(
    tmp_path: Path,
) -> None:
    from typer.testing import CliRunner

    from voxeval.cli.main import app

    run, items = _run(tmp_path, ["duration"], limit=1)
    ratings = tmp_path / "human.csv"
    ratings.write_text(f"item_id,score\n{items['q0']},7\n")
    result = CliRunner().invoke(app, ["human-scores", str(run), str(ratings)])
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert "the run has no checklist scores" in text
    assert "voxeval score RUN --metrics checklist --config judge.yaml" in text
    assert "field system" not in text


@pytest.mark.slow  # Whisper base identifies the language of each of the four replies
def test_groups_too_small_for_an_interval_say_why(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from voxeval.cli.main import app

    run, items = _run(tmp_path, ["checklist"], limit=4)
    ratings = tmp_path / "human.csv"
    # q0..q3: checklist 4, 5, 6, 7; categories TC (q0, q2) and SR (q1, q3)
    rows = [f"{items[q]},{score}" for q, score in (("q0", 3), ("q1", 6), ("q2", 5), ("q3", 9))]
    ratings.write_text("item_id,score\n" + "\n".join(rows) + "\n")
    result = CliRunner().invoke(app, ["human-scores", str(run), str(ratings)])
    assert result.exit_code == 0, result.output
    saved = json.loads((run / "report" / "human_scores.json").read_text())
    assert "note" not in saved["overall"] and saved["overall"]["pearson"]["ci_low"] is not None
    for category in ("SR", "TC"):
        stat = saved["by_category"][category]
        assert stat["pearson"]["ci_low"] is None
        assert stat["note"] == (
            "no interval: 2 queries, an interval needs at least 3 (the resampled unit is the query)"
        )
    text = " ".join(result.output.split())
    assert "TC: no interval: 2 queries" in text
