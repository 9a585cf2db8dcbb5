from __future__ import annotations

from tests.scoring.helpers import remote_resources, transcription
from voxeval.benchmarks.wildspeech.spoken_query import Assertion
from voxeval.scoring import ReplyRecord, Score, best_match, check, run_metric


def test_fuzzy_match_uses_word_windows() -> None:
    score, window = best_match("Paris", "The capital is Pari, in France.")
    assert score >= 85 and window == "pari"
    assert best_match("cat", "look at the catalogue")[0] < 85


def test_assertion_kinds() -> None:
    text = "The Eiffel Tower is about three hundred and thirty metres tall, in Paris."
    assert check(Assertion(kind="require_any", values=["Paris", "Lyon"]), text)[0]
    assert not check(Assertion(kind="require_all", values=["Paris", "Lyon"]), text)[0]
    assert check(Assertion(kind="number", values=["330"]), text)[0]
    assert check(Assertion(kind="number", values=["324"], tolerance=10), text)[0]
    assert not check(Assertion(kind="number", values=["300"]), text)[0]
    assert not check(Assertion(kind="forbid", values=["Eiffel Tower"]), text)[0]
    assert check(Assertion(kind="forbid", values=["London"]), text)[0]


def test_assertion_score_is_mean_over_transcripts(openai_server, tone) -> None:
    openai_server.push(
        transcription("It is Canberra, not Sydney."),
        transcription("Canberra."),
        transcription("Sydney is the capital."),
    )
    record = ReplyRecord(
        item_id="q",
        query="What is the capital of Australia?",
        reply_audio=tone,
        assertions=(
            Assertion(kind="require_any", values=["Canberra"]),
            Assertion(kind="forbid", values=["Sydney is the capital"]),
        ),
    )
    score = run_metric("assertions", record, remote_resources(openai_server))
    assert score.details["per_transcript"] == [1.0, 1.0, 0.0]
    assert score.value == 2 / 3
    assert score.details["assertions"][0]["pass_rate"] == 2 / 3


def test_no_assertions_is_not_run(openai_server, tone) -> None:
    score = run_metric(
        "assertions", ReplyRecord(item_id="q", query="q", reply_audio=tone),
        remote_resources(openai_server),
    )  # fmt: skip
    assert score == Score.not_run("the item has no assertions")
