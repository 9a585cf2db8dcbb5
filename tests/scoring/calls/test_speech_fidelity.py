"""The offline speech-fidelity metrics on hand-built timelines, with the ``openai`` scoring ASR
against a loopback server scripted with transcripts: which turns are rated (and which audio
is sent), what a miss reports, and not-run/pending on our side's faults."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, FaultSchedule
from tests.fakes.transcription_endpoint import remote_asr, transcription, uploaded_audio
from tests.simulation.helpers import scenario, write_suite
from voxeval.audio import Audio
from voxeval.benchmarks.eva.scenario import Scenario, load_scenario_suite
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.speech_fidelity import (
    agent_speech_fidelity_asr,
    spoken_turns,
    user_speech_fidelity_asr,
)
from voxeval.scoring.metric_runner import run_metric
from voxeval.scoring.replies.reply_record import ScoringResources
from voxeval.simulation.timeline import SpeakerSegment, Timeline

AGENT = "agent_speech_fidelity_asr"
USER = "user_speech_fidelity_asr"


@pytest.fixture
def asr_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server


def scripted(server: FakeOpenAIServer, *heard: str) -> ScoringResources:
    """Scoring resources whose ASR hears ``heard``, one transcript per request, in order."""
    server.push(*(transcription(text) for text in heard))
    return ScoringResources(asr=lambda: remote_asr(server))


def upload_durations(server: FakeOpenAIServer) -> list[float]:
    return [round(audio.duration, 2) for audio in uploaded_audio(server)]


@pytest.fixture(scope="module")
def call_scenario(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    data = scenario()
    data["user_goal"]["information_required"] = {
        "member_id": "KX492B7",
        "date_of_birth": "1980-05-01",
    }
    path = write_suite(tmp_path_factory.mktemp("suite"), [data])
    return load_scenario_suite(path).scenarios[0]


def _timeline() -> Timeline:
    seg = SpeakerSegment
    return Timeline(
        segments=[
            seg("assistant", 0.0, 1.0, 0, "Hello, clinic line, how can I help you?"),
            seg("user", 1.5, 2.5, 0, "My member ID is K X 4 9 2 B 7."),
            seg("user", 3.0, 4.0, 0, ""),  # the same turn after a pause
            seg("assistant", 4.5, 5.5, 1, "Your confirmation code is R 7 7 4 1."),
            seg("user", 6.0, 7.0, 1, "I was born on May 1st, 1980."),
            seg("assistant", 7.5, 8.5, 2, "Your balance is $45.50, due March 5th, 2026."),
            seg("user", 9.0, 10.0, 2, "Thanks, bye."),
        ]
    )


def _record(call_scenario: Scenario, tracks: bool = True, timeline: Timeline | None = None) -> Any:
    silence = Audio.silence(11.0)
    return LiveCallRecord(
        timeline=timeline or _timeline(),
        scenario=call_scenario,
        tracks={"user": silence, "assistant": silence} if tracks else {},
    )


def test_agent_turns_that_carry_their_entities_pass(
    call_scenario: Scenario, asr_server: FakeOpenAIServer
) -> None:
    resources = scripted(
        asr_server, "Your confirmation code is R7741.", "Balance $45.50, due March 5, 2026."
    )
    score = agent_speech_fidelity_asr(_record(call_scenario), resources)
    assert (score.value, score.passed) == (1.0, True)
    # the greeting has no entity: not transcribed, not rated; each turn is sent with 0.15 s
    # of its track on both sides
    assert upload_durations(asr_server) == [1.3, 1.3]
    assert score.details["rated_turns"] == 2 and score.details["failed_turns"] == []
    assert [t["entities"] for t in score.details["turns"]] == [
        ["R 7 7 4 1"],
        ["$45.50", "March 5th, 2026"],
    ]


def test_a_misspoken_agent_entity_fails_its_turn_and_is_named(
    call_scenario: Scenario, asr_server: FakeOpenAIServer
) -> None:
    resources = scripted(
        asr_server, "Your confirmation code is R7714.", "Balance $45.50, due March 5, 2026."
    )
    score = agent_speech_fidelity_asr(_record(call_scenario), resources)
    assert (score.value, score.passed) == (0.5, False)
    assert score.details["failed_turns"] == [1]
    assert score.details["turns"][0]["missed"] == ["R 7 7 4 1"]
    assert score.details["turns"][1]["missed"] == []


def test_one_miss_in_twenty_turns_still_passes_the_095_threshold(
    asr_server: FakeOpenAIServer,
) -> None:
    segments = [
        SpeakerSegment("assistant", float(2 * n), float(2 * n + 1), n, f"Code A{n:03d}.")
        for n in range(20)
    ]
    heard = [f"Code A{n:03d}." for n in range(19)] + ["Code B019."]
    record = LiveCallRecord(
        timeline=Timeline(segments=segments), tracks={"assistant": Audio.silence(41.0)}
    )
    score = agent_speech_fidelity_asr(record, scripted(asr_server, *heard))
    assert (score.value, score.passed) == (0.95, True)
    assert score.details["turns"][19]["missed"] == ["A019"]


def test_an_agent_turn_cut_short_by_the_caller_is_not_rated(
    call_scenario: Scenario, asr_server: FakeOpenAIServer
) -> None:
    timeline = _timeline()
    timeline.segments[3] = SpeakerSegment(
        "assistant", 4.5, 5.0, 1, "Your confirmation code is R 7 7 4 1.", interrupted=True
    )
    resources = scripted(asr_server, "Balance $45.50, due March 5, 2026.")
    score = agent_speech_fidelity_asr(_record(call_scenario, timeline=timeline), resources)
    assert (score.value, score.details["cut_turns"], score.details["rated_turns"]) == (1.0, [1], 1)
    assert len(asr_server.posts("/audio/transcriptions")) == 1  # the cut turn is not sent


def test_caller_turns_are_checked_against_the_scenario_entities(
    call_scenario: Scenario, asr_server: FakeOpenAIServer
) -> None:
    # turn 0 spans both of its segments; turn 2 has no key entity
    resources = scripted(asr_server, "My member ID is KX492B7.", "I was born on May 1st, 1980.")
    score = user_speech_fidelity_asr(_record(call_scenario), resources)
    assert upload_durations(asr_server) == [2.8, 1.3]  # 1.5-4.0 and 6.0-7.0, padded
    assert (score.value, score.passed, score.details["regenerate"]) == (1.0, True, False)
    assert [t["entities"] for t in score.details["turns"]] == [["KX492B7"], ["1980-05-01"]]
    assert score.details["validates"] == "simulation"


def test_a_caller_that_misspoke_its_id_marks_the_call_for_regeneration(
    call_scenario: Scenario, asr_server: FakeOpenAIServer
) -> None:
    resources = scripted(asr_server, "My member ID is KX493B7.", "I was born on May 1st, 1980.")
    score = user_speech_fidelity_asr(_record(call_scenario), resources)
    assert (score.value, score.passed, score.details["regenerate"]) == (0.5, False, True)
    assert score.details["turns"][0]["missed"] == ["KX492B7"]


@pytest.mark.parametrize("metric", [AGENT, USER])
def test_a_text_mode_call_is_not_run(
    metric: str, call_scenario: Scenario, asr_server: FakeOpenAIServer
) -> None:
    score = run_metric(metric, _record(call_scenario, tracks=False), scripted(asr_server))
    assert score.value is None and not score.pending
    assert score.error is not None and "text-mode" in score.error
    assert asr_server.requests == []


@pytest.mark.parametrize("metric", [AGENT, USER])
def test_without_a_scoring_asr_the_check_is_not_run(metric: str, call_scenario: Scenario) -> None:
    score = run_metric(metric, _record(call_scenario), ScoringResources())
    assert score.value is None and not score.pending
    assert score.error == "no ASR is configured for scoring"


@pytest.mark.parametrize("metric", [AGENT, USER])
def test_a_failing_scoring_asr_leaves_the_metric_pending(
    metric: str, call_scenario: Scenario
) -> None:
    down = FaultSchedule(["server_error"], cycle=True)
    with FakeOpenAIServer(faults=down) as server:
        resources = ScoringResources(asr=lambda: remote_asr(server))
        score = run_metric(metric, _record(call_scenario), resources)
    assert score.pending and score.value is None
    assert score.error is not None and "scoring ASR failed: EndpointError" in score.error
    assert "gave up after 2 attempts" in score.error
    assert server.fault_counts("/audio/transcriptions") == {"server_error": 2}  # one retry


def test_a_scenario_without_key_entities_is_not_run_for_the_caller(
    tmp_path: Path, asr_server: FakeOpenAIServer
) -> None:
    data = scenario()
    data["user_goal"]["information_required"] = {}
    suite = load_scenario_suite(write_suite(tmp_path, [data]))
    record = _record(suite.scenarios[0])
    score = user_speech_fidelity_asr(record, scripted(asr_server))
    assert score.error == "the scenario lists no key entities"
    assert asr_server.requests == []


def test_backchannels_are_not_part_of_a_spoken_turn() -> None:
    """Golden: the caller's "mm-hm" at 5.0-5.4 carries its current turn number (0) but neither
    stretches turn 0 (1.5-4.0, both pieces) nor joins its text; the agent's "mm-hm" during
    the caller's pause is not an agent turn."""
    timeline = _timeline()
    timeline.segments += [
        SpeakerSegment("user", 5.0, 5.4, 0, "mm-hm", backchannel=True),
        SpeakerSegment("assistant", 2.6, 2.9, 0, "mm-hm", backchannel=True),
    ]
    caller = spoken_turns(timeline, "user")
    assert [(t.turn, t.start, t.end) for t in caller] == [
        (0, 1.5, 4.0),
        (1, 6.0, 7.0),
        (2, 9.0, 10.0),
    ]
    assert caller[0].intended_text == "My member ID is K X 4 9 2 B 7."
    agent_turn_0 = spoken_turns(timeline, "assistant")[0]
    assert (agent_turn_0.start, agent_turn_0.end) == (0.0, 1.0)
    assert agent_turn_0.intended_text == "Hello, clinic line, how can I help you?"
