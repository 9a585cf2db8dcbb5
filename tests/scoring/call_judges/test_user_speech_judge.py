"""``user_speech_fidelity`` (audio judge) against a loopback judge scripted with known
ratings: any caller turn rated 1 fails the call (regenerate), otherwise it passes whatever
the other ratings; each request carries the caller turn's audio (a turn split by a pause is
one clip), its intended text and entities; not run and pending as for every judged metric."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, chat_text
from tests.scoring.audio_judge_helpers import (
    answer,
    audio_resources,
    clip_seconds,
    sent_audio,
    sent_prompt,
    track,
)
from tests.simulation.helpers import scenario, write_suite
from voxeval.benchmarks.eva.scenario import Scenario, load_scenario_suite
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.metric_runner import run_metric
from voxeval.scoring.replies.reply_record import ScoringResources
from voxeval.scoring.score import Score
from voxeval.scoring.system_fault import partial_call_score
from voxeval.simulation.timeline import SpeakerSegment, Timeline

METRIC = "user_speech_fidelity"
ID_TURN = "My member ID is K X 4 9 2 B 7."
DOB_TURN = "I was born on May 1st, 1980."


@pytest.fixture(scope="module")
def call_scenario(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    data = scenario()
    data["user_goal"]["information_required"] = {
        "member_id": "KX492B7",
        "date_of_birth": "1980-05-01",
    }
    path = write_suite(tmp_path_factory.mktemp("suite"), [data])
    return load_scenario_suite(Path(path)).scenarios[0]


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def record(call_scenario: Scenario, audio: bool = True) -> LiveCallRecord:
    seg = SpeakerSegment
    segments = [
        seg("assistant", 0.0, 1.0, 0, "Hello, how can I help?"),
        seg("user", 1.5, 2.5, 0, ID_TURN),
        seg("user", 3.0, 3.8, 0, ""),  # the same caller turn after a pause
        seg("assistant", 4.3, 5.0, 1, "And your date of birth?"),
        seg("user", 5.5, 7.0, 1, DOB_TURN),
    ]
    tracks = {"user": track(segments, "user", 8.0)} if audio else {}
    return LiveCallRecord(
        timeline=Timeline(segments=segments), scenario=call_scenario, tracks=tracks
    )


def rating(r: int, evidence: str = "all clear") -> dict[str, object]:
    return {"transcript": "heard words", "rating": r, "evidence": evidence}


def test_no_turn_rated_one_passes_with_the_lowest_rating(
    server: FakeOpenAIServer, call_scenario: Scenario
) -> None:
    server.push(answer(rating(3)), answer(rating(2, "a stumble before the date")))
    score = run_metric(METRIC, record(call_scenario), audio_resources(server))
    assert (score.value, score.passed) == (1.0, True)
    assert score.details["lowest_rating"] == 2 and score.details["regenerate"] is False
    assert [(t["turn"], t["rating"]) for t in score.details["turns"]] == [(0, 3), (1, 2)]
    assert score.details["turns"][1]["evidence"] == "a stumble before the date"
    assert score.details["validates"] == "simulation"
    assert score.details["method"] == "audio_judge"
    # turn 0 spans both of its segments; each prompt holds the turn's text and entities
    assert sent_audio(server, 0).duration == pytest.approx(clip_seconds(1.5, 3.8), abs=0.01)
    assert sent_audio(server, 1).duration == pytest.approx(clip_seconds(5.5, 7.0), abs=0.01)
    first, second = sent_prompt(server, 0), sent_prompt(server, 1)
    assert "caller turn 0" in first and ID_TURN in first and "Key entities in it: KX492B7" in first
    assert DOB_TURN in second and "1980-05-01" in second


def test_a_turn_rated_one_fails_the_call_and_asks_for_regeneration(
    server: FakeOpenAIServer, call_scenario: Scenario
) -> None:
    server.push(answer(rating(1, "heard K X 4 9 2 D 7")), answer(rating(3)))
    score = run_metric(METRIC, record(call_scenario), audio_resources(server))
    assert (score.value, score.passed) == (0.0, False)
    assert score.details["lowest_rating"] == 1 and score.details["failed_turns"] == [0]
    assert score.details["regenerate"] is True


def test_parse_failures_are_counted_and_a_silent_judge_leaves_it_pending(
    server: FakeOpenAIServer, call_scenario: Scenario
) -> None:
    server.push(answer(rating(4)), answer(rating(3)), answer(rating(3)))  # 4 is off the scale
    score = run_metric(METRIC, record(call_scenario), audio_resources(server))
    assert score.value == 1.0 and score.details["parse_failures"] == 1
    assert score.details["judge_calls"] == 3
    server.push(*(chat_text("") for _ in range(3)))
    pending = run_metric(METRIC, record(call_scenario), audio_resources(server))
    assert pending.pending and pending.value is None
    assert pending.details["validates"] == "simulation"


def test_no_audio_judge_or_no_audio_is_not_run(
    server: FakeOpenAIServer, call_scenario: Scenario
) -> None:
    missing = run_metric(METRIC, record(call_scenario), ScoringResources())
    assert missing.error == "no audio judge configured (set `audio_judge:`)"
    text_mode = run_metric(METRIC, record(call_scenario, audio=False), audio_resources(server))
    assert text_mode.value is None and "text-mode call" in (text_mode.error or "")
    assert server.posts("/chat/completions") == []


def test_a_system_fault_says_nothing_about_the_caller() -> None:
    failed = partial_call_score(METRIC, Score.not_run("the caller said nothing"), "timeout")
    assert failed.value is None and failed.error == "system fault: timeout"
