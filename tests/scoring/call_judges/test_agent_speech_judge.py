"""``agent_speech_fidelity`` (audio judge) against a loopback judge scripted with known
verdicts, on a recorded call of synthetic tones: the value and threshold, which turn's audio
each request carried, parse failures, pending and not-run, cut turns, and the two prompt
variants (intended text for cascades, given entities for speech-to-speech)."""

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
from voxeval.protocols.live_call import AUDIO_JUDGED_METRICS, default_metrics
from voxeval.scoring.call_judges import agent_speech_judge
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.metric_direction import metric_direction
from voxeval.scoring.metric_runner import run_metric
from voxeval.scoring.replies.reply_record import ScoringResources
from voxeval.scoring.score import Score
from voxeval.scoring.system_fault import partial_call_score
from voxeval.simulation.timeline import SpeakerSegment, Timeline, ToolEvent

METRIC = "agent_speech_fidelity"
GREETING = "Hello, clinic line, how can I help you?"
CODE_TURN = "Your confirmation code is R 7 7 4 1."
BALANCE_TURN = "Your balance is $45.50, due March 5th, 2026."


@pytest.fixture(scope="module")
def call_scenario(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    data = scenario()
    data["user_goal"]["information_required"] = {"member_id": "KX492B7"}
    path = write_suite(tmp_path_factory.mktemp("suite"), [data])
    return load_scenario_suite(Path(path)).scenarios[0]


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def segments(cut_second: bool = False) -> list[SpeakerSegment]:
    """Agent turns 0, 1, 2 of 1.0 s, 1.4 s and 1.8 s (so each clip's length names its turn)."""
    seg = SpeakerSegment
    return [
        seg("assistant", 0.0, 1.0, 0, GREETING),
        seg("user", 1.5, 2.5, 0, "My member ID is K X 4 9 2 B 7."),
        seg("assistant", 3.0, 4.4, 1, CODE_TURN, interrupted=cut_second),
        seg("user", 5.0, 6.0, 1, "Thanks."),
        seg("assistant", 6.5, 8.3, 2, BALANCE_TURN),
    ]


def record(
    call_scenario: Scenario,
    pipeline: str = "cascade",
    *,
    cut_second: bool = False,
    audio: bool = True,
    tools: list[ToolEvent] | None = None,
) -> LiveCallRecord:
    segs = segments(cut_second)
    tracks = {"assistant": track(segs, "assistant", 9.0)} if audio else {}
    return LiveCallRecord(
        timeline=Timeline(segments=segs, tools=tools or []),
        scenario=call_scenario,
        tracks=tracks,
        pipeline=pipeline,
    )


def verdict(v: int, evidence: str = "matched") -> dict[str, object]:
    return {"transcript": "heard words", "verdict": v, "evidence": evidence}


def test_two_of_three_faithful_turns_score_two_thirds_and_fail_the_threshold(
    server: FakeOpenAIServer, call_scenario: Scenario
) -> None:
    server.push(answer(verdict(1)), answer(verdict(1)), answer(verdict(0, "said R 7 7 1 4")))
    score = run_metric(METRIC, record(call_scenario), audio_resources(server))
    assert score.value == pytest.approx(2 / 3) and score.passed is False
    details = score.details
    assert (details["method"], details["variant"]) == ("audio_judge", "intended_text")
    assert details["rated_turns"] == 3 and details["failed_turns"] == [2]
    assert [t["verdict"] for t in details["turns"]] == [1, 1, 0]
    assert details["turns"][2]["evidence"] == "said R 7 7 1 4"
    assert details["turns"][2]["entities"] == ["$45.50", "March 5th, 2026"]
    assert details["judge_calls"] == 3 and details["parse_failures"] == 0
    assert details["judge"]["modality"] == "audio"
    # one request per turn, each carrying that turn's audio and intended text
    for n, (start, end, text) in enumerate(
        [(0.0, 1.0, GREETING), (3.0, 4.4, CODE_TURN), (6.5, 8.3, BALANCE_TURN)]
    ):
        assert sent_audio(server, n).duration == pytest.approx(clip_seconds(start, end), abs=0.01)
        prompt = sent_prompt(server, n)
        assert f"agent turn {n} of a phone call" in prompt and text in prompt
    assert "Key entities in it: R 7 7 4 1" in sent_prompt(server, 1)
    assert "Key entities in it: (none)" in sent_prompt(server, 0)


def test_every_turn_faithful_passes(server: FakeOpenAIServer, call_scenario: Scenario) -> None:
    server.push(*(answer(verdict(1)) for _ in range(3)))
    score = run_metric(METRIC, record(call_scenario), audio_resources(server))
    assert (score.value, score.passed) == (1.0, True)


def test_a_malformed_answer_is_retried_and_counted(
    server: FakeOpenAIServer, call_scenario: Scenario
) -> None:
    server.push(
        chat_text("The audio sounds right to me."),  # not JSON
        answer({"verdict": 1}),  # JSON, but no transcript or evidence
        answer(verdict(1)),
        answer(verdict(1)),
        answer(verdict(0)),
    )
    score = run_metric(METRIC, record(call_scenario), audio_resources(server))
    assert score.value == pytest.approx(2 / 3)
    assert score.details["parse_failures"] == 2 and score.details["judge_calls"] == 5
    assert len(server.posts("/chat/completions")) == 5
    # the retries of turn 0 carry turn 0's audio and prompt again
    for n in (1, 2):
        assert sent_audio(server, n).duration == pytest.approx(clip_seconds(0.0, 1.0), abs=0.01)
        assert GREETING in sent_prompt(server, n)


def test_a_judge_that_never_answers_in_format_leaves_the_metric_pending(
    server: FakeOpenAIServer, call_scenario: Scenario
) -> None:
    server.push(answer(verdict(1)), *(chat_text("no idea") for _ in range(3)))
    score = run_metric(METRIC, record(call_scenario), audio_resources(server))
    assert score.pending and score.value is None
    assert "turn 1" in (score.error or "")
    assert score.details["failed_turn"] == 1 and score.details["parse_failures"] == 3
    assert score.details["judge_calls"] == 4 and score.details["method"] == "audio_judge"
    assert len(server.posts("/chat/completions")) == 4  # turn 2 is not graded in vain


def test_no_audio_judge_is_not_run_with_the_reason(call_scenario: Scenario) -> None:
    score = run_metric(METRIC, record(call_scenario), ScoringResources())
    assert score.value is None and not score.pending
    assert score.error == "no audio judge configured (set `audio_judge:`)"


def test_a_text_mode_call_is_not_run(server: FakeOpenAIServer, call_scenario: Scenario) -> None:
    score = run_metric(METRIC, record(call_scenario, audio=False), audio_resources(server))
    assert score.value is None and "text-mode call" in (score.error or "")
    assert server.posts("/chat/completions") == []


def test_a_turn_cut_short_by_the_caller_is_not_rated(
    server: FakeOpenAIServer, call_scenario: Scenario
) -> None:
    server.push(answer(verdict(1)), answer(verdict(0)))
    score = run_metric(METRIC, record(call_scenario, cut_second=True), audio_resources(server))
    assert (score.value, score.passed) == (0.5, False)
    assert score.details["cut_turns"] == [1] and score.details["rated_turns"] == 2
    assert [t["turn"] for t in score.details["turns"]] == [0, 2]
    assert CODE_TURN not in sent_prompt(server, 1)


def test_speech_to_speech_checks_the_entities_it_was_given(
    server: FakeOpenAIServer, call_scenario: Scenario
) -> None:
    lookup = ToolEvent(2.8, 1, "find_booking", {"member_id": "KX492B7"}, {"code": "R7741"})
    server.push(
        answer({**verdict(0, "said R 7 7 1 4"), "entities_spoken": True}),
        answer({**verdict(1), "entities_spoken": False}),
    )
    rec = record(call_scenario, "speech_to_speech", tools=[lookup])
    score = run_metric(METRIC, rec, audio_resources(server))
    # the greeting comes before any entity was given: not sent; turn 2 speaks none: not rated
    assert (score.value, score.passed) == (0.0, False)
    assert score.details["variant"] == "entities" and score.details["rated_turns"] == 1
    assert score.details["unrated_turns"] == {
        "0": "no entity given to the agent yet",
        "2": "speaks none of the given entities",
    }
    assert [t["turn"] for t in score.details["turns"]] == [1, 2]
    assert len(server.posts("/chat/completions")) == 2
    prompt = sent_prompt(server, 0)
    assert "- KX492B7 (from caller turn 0)" in prompt
    assert "- R7741 (from tool find_booking (agent turn 1))" in prompt
    assert "speech-to-speech" in prompt and CODE_TURN not in prompt  # no intended text
    assert sent_audio(server, 0).duration == pytest.approx(clip_seconds(3.0, 4.4), abs=0.01)


def test_the_two_variants_ask_different_questions() -> None:
    intended, entities = agent_speech_judge.INTENDED_TEMPLATE, agent_speech_judge.ENTITY_TEMPLATE
    assert "{intended_text}" in intended.user and "{intended_text}" not in entities.user
    assert "{entity_list}" in entities.user
    assert "entities_spoken" in entities.schema["required"]  # type: ignore[index]
    assert "entities_spoken" not in intended.schema["required"]  # type: ignore[index]
    assert agent_speech_judge.variant_for("hybrid") == "intended_text"
    assert agent_speech_judge.variant_for("unknown") == "intended_text"
    assert agent_speech_judge.variant_for("speech_to_speech") == "entities"


def test_defaults_direction_and_failure_value() -> None:
    assert not set(AUDIO_JUDGED_METRICS) & set(default_metrics(judged=True))
    assert set(AUDIO_JUDGED_METRICS) <= set(default_metrics(audio_judged=True))
    assert metric_direction(METRIC) == "higher"
    # the system failed before any agent turn could be rated: the metric's failure value
    failed = partial_call_score(METRIC, Score.not_run("no agent turn to rate"), "timeout")
    assert (failed.value, failed.passed) == (0.0, False)
    assert failed.details["system_fault"] == "timeout"
