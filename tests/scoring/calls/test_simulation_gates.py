"""The simulation validation gates on hand-built recordings: valid and invalid ends, the
behaviour judge (a loopback server scripted to find each corruption type), parse failures
counted, no judge -> not run, and the offline user-speech check through the ``openai`` scoring
ASR against the same kind of loopback server, scripted with transcripts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from tests.fakes.transcription_endpoint import remote_asr, transcription
from tests.simulation.helpers import scenario as scenario_data
from tests.simulation.helpers import write_suite
from voxeval.audio import Audio
from voxeval.benchmarks.eva.scenario import Scenario, load_scenario_suite
from voxeval.errors import ProviderUnavailable
from voxeval.providers import create_provider
from voxeval.scoring.calls import user_behaviour
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.simulation_gates import GateResult, run_gates, user_speech, valid_end
from voxeval.scoring.judge import Judge
from voxeval.scoring.replies.reply_record import ScoringResources
from voxeval.simulation.timeline import EndEvent, SpeakerSegment, Timeline, ToolEvent

FAST = {"timeout_s": 2.0, "max_retries": 0, "backoff_base_s": 0.001, "backoff_max_s": 0.002}
TYPES = user_behaviour.CORRUPTION_TYPES


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Scenario:
    data = scenario_data()
    data["user_goal"]["information_required"] = {"member_id": "KX492B7"}
    path = write_suite(tmp_path_factory.mktemp("suite"), [data])
    return load_scenario_suite(path).scenarios[0]


def timeline(end: str = "user_end_call") -> Timeline:
    seg = SpeakerSegment
    return Timeline(
        segments=[
            seg("assistant", 0.0, 1.0, 0, "Clinic, how can I help?"),
            seg("user", 1.5, 2.5, 0, "I would like to book a visit.", transcript="book a fist"),
            seg("assistant", 3.0, 4.0, 1, "Your member ID please?"),
            seg("user", 4.5, 5.5, 1, "My member ID is K X 4 9 2 B 7."),
            seg("assistant", 6.0, 7.0, 2, "Booked for Friday."),
            seg("user", 7.5, 8.0, 2, "Thanks, bye."),
        ],
        tools=[ToolEvent(5.8, 2, "book_visit", {"day": "friday"}, {"ok": True}, kind="write")],
        end=EndEvent(8.0, end),
    )


def record(scenario: Scenario, tracks: bool = False) -> LiveCallRecord:
    silence = Audio.silence(9.0)
    return LiveCallRecord(
        timeline=timeline(),
        scenario=scenario,
        pipeline="cascade",
        tracks={"user": silence, "assistant": silence} if tracks else {},
    )


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture
def asr_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def judge_resources(server: FakeOpenAIServer) -> ScoringResources:
    spec = {"provider": "openai", "base_url": server.url, "model": "judge", **FAST}
    llm = create_provider("llm", {**spec, "schema_retries": 0})
    return ScoringResources(judge=lambda: Judge(llm, max_attempts=3))


def hearing(asr_server: FakeOpenAIServer, *heard: str, **resources: Any) -> ScoringResources:
    """Resources whose scoring ASR hears ``heard`` (one transcript per request, in order)."""
    asr_server.push(*(transcription(text) for text in heard))
    return ScoringResources(asr=lambda: remote_asr(asr_server), **resources)


def verdict(*detected: str) -> FakeResponse:
    found = {t: {"detected": t in detected, "evidence": f"caller turn: {t}"} for t in TYPES}
    return chat_text(json.dumps({"corruption": found}))


@pytest.mark.parametrize(
    ("reason", "status"),
    [
        ("user_end_call", "pass"),
        ("agent_timeout", "pass"),
        ("agent_error", "pass"),
        ("agent_end_call", "pass"),  # the system under test chose to end: see the module doc
        ("max_duration", "fail"),
        ("error", "fail"),
        (None, "fail"),
    ],
)
def test_valid_end(reason: str | None, status: str) -> None:
    result = valid_end({"end_reason": reason})
    assert result.status == status
    assert result.details["end_reason"] == (reason or "")
    if status == "fail":
        assert result.reason
    if reason == "max_duration":
        assert "max_duration_s" in str(result.reason)


def test_a_clean_caller_passes_the_behaviour_gate(
    server: FakeOpenAIServer, scenario: Scenario
) -> None:
    server.push(verdict())
    results = run_gates(["user_behaviour"], {}, lambda: record(scenario), judge_resources(server))
    gate = results["user_behaviour"]
    assert gate.status == "pass" and gate.details == {"detected": []}
    score = gate.scores["user_behavioural_fidelity"]
    assert (score.value, score.passed) == (1.0, True)
    assert score.details["parse_failures"] == 0
    prompt = "\n".join(
        str(m["content"]) for m in server.posts("/chat/completions")[0].body["messages"]
    )
    # the caller is judged on what it meant to say, not on the agent's transcript of it
    assert "I would like to book a visit." in prompt and "book a fist" not in prompt
    assert "Book a visit on Friday." in prompt and "KX492B7" in prompt
    assert "book_visit" in prompt  # the tools that modify records
    assert "the caller hung up (end_call)" in prompt


@pytest.mark.parametrize("corruption", TYPES)
def test_each_corruption_type_fails_the_gate(
    corruption: str, server: FakeOpenAIServer, scenario: Scenario
) -> None:
    server.push(verdict(corruption))
    results = run_gates(["user_behaviour"], {}, lambda: record(scenario), judge_resources(server))
    gate = results["user_behaviour"]
    assert gate.status == "fail"
    assert gate.details == {"detected": [corruption]}
    assert f"{corruption}: caller turn: {corruption}" in str(gate.reason)
    score = gate.scores["user_behavioural_fidelity"]
    assert (score.value, score.passed) == (0.0, False)
    per_type = score.details["corruption"]
    assert [t for t in TYPES if per_type[t]["detected"]] == [corruption]


def test_a_malformed_verdict_is_retried_and_counted(
    server: FakeOpenAIServer, scenario: Scenario
) -> None:
    partial = {"corruption": {t: {"detected": False, "evidence": ""} for t in TYPES[:4]}}
    server.push(chat_text("The caller behaved."), chat_text(json.dumps(partial)), verdict())
    results = run_gates(["user_behaviour"], {}, lambda: record(scenario), judge_resources(server))
    score = results["user_behaviour"].scores["user_behavioural_fidelity"]
    assert results["user_behaviour"].status == "pass"
    assert score.details["parse_failures"] == 2 and score.details["judge_calls"] == 3


def test_a_judge_never_in_format_leaves_the_gate_not_run(
    server: FakeOpenAIServer, scenario: Scenario
) -> None:
    server.push(chat_text("no"), chat_text("still no"), chat_text("{}"))
    results = run_gates(["user_behaviour"], {}, lambda: record(scenario), judge_resources(server))
    gate = results["user_behaviour"]
    assert gate.status == "not_run" and "malformed after 3 attempts" in str(gate.reason)
    assert gate.scores["user_behavioural_fidelity"].pending


def test_without_a_judge_the_behaviour_gate_is_not_run(scenario: Scenario) -> None:
    def no_judge() -> Judge:
        raise ProviderUnavailable("no judge is configured (set `judge:` in the run config)")

    results = run_gates(
        ["user_behaviour"], {}, lambda: record(scenario), ScoringResources(judge=no_judge)
    )
    gate = results["user_behaviour"]
    assert gate.status == "not_run"
    assert gate.reason == (
        "user_behavioural_fidelity: no judge is configured (set `judge:` in the run config)"
    )


def test_user_speech_fails_when_a_caller_turn_misses_its_entity(
    asr_server: FakeOpenAIServer, scenario: Scenario
) -> None:
    resources = hearing(asr_server, "My member ID is KX493B7.")  # the caller's audio was wrong
    gate = user_speech(record(scenario, tracks=True), resources, asr_decides=True)
    assert gate.status == "fail"
    assert "user_speech_fidelity_asr: turn 1 missed ['KX492B7']" in str(gate.reason)
    assert gate.scores["user_speech_fidelity_asr"].value == 0.0


def test_user_speech_passes_when_every_entity_was_heard(
    asr_server: FakeOpenAIServer, scenario: Scenario
) -> None:
    resources = hearing(asr_server, "My member ID is KX492B7.")
    gate = user_speech(record(scenario, tracks=True), resources, asr_decides=True)
    assert gate.status == "pass" and gate.reason is None
    assert gate.scores["user_speech_fidelity_asr"].value == 1.0


def test_user_speech_is_not_run_on_a_text_mode_call(
    asr_server: FakeOpenAIServer, scenario: Scenario
) -> None:
    gate = user_speech(record(scenario), hearing(asr_server))
    assert gate.status == "not_run"
    assert "no user audio track" in str(gate.reason)
    assert asr_server.requests == []


def test_an_invalid_end_skips_the_gates_that_read_the_call(scenario: Scenario) -> None:
    def never() -> LiveCallRecord:
        raise AssertionError("the recording is not read after an invalid end")

    results = run_gates(GATES_ALL, {"end_reason": "max_duration"}, never, None)
    assert [r.status for r in results.values()] == ["fail", "skipped", "skipped"]
    assert results["user_speech"].reason == "valid_end failed"


def test_gate_results_round_trip_through_json(server: FakeOpenAIServer, scenario: Scenario) -> None:
    server.push(verdict("premature_ending"))
    results = run_gates(["user_behaviour"], {}, lambda: record(scenario), judge_resources(server))
    data = json.loads(json.dumps(results["user_behaviour"].to_dict()))
    back = GateResult.from_dict("user_behaviour", data)
    assert back == results["user_behaviour"]


def test_unknown_gate_names_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown simulation gates"):
        run_gates(["valid_end", "caller_mood"], {}, lambda: LiveCallRecord(), None)


GATES_ALL = ["valid_end", "user_behaviour", "user_speech"]


def test_user_speech_fails_when_the_audio_judge_rates_a_caller_turn_1(
    server: FakeOpenAIServer, asr_server: FakeOpenAIServer, scenario: Scenario
) -> None:
    def rated(r: int, evidence: str = "all clear") -> FakeResponse:
        return chat_text(json.dumps({"transcript": "words", "rating": r, "evidence": evidence}))

    server.push(rated(3), rated(1, "heard K X 4 9 3 B 7"), rated(2))  # caller turns 0, 1, 2
    spec = {"provider": "openai", "base_url": server.url, "model": "audio-judge", **FAST}
    heard = create_provider("audio_llm", {**spec, "schema_retries": 0})
    judge = Judge(heard, modality="audio")
    # the ASR check alone would pass
    resources = hearing(asr_server, "My member ID is KX492B7.", audio_judge=lambda: judge)
    gate = user_speech(record(scenario, tracks=True), resources)
    assert gate.status == "fail" and gate.details["decided_by"] == "user_speech_fidelity"
    assert gate.reason == "user_speech_fidelity: caller turn(s) 1 rated 1"
    assert gate.scores["user_speech_fidelity_asr"].value == 1.0
    assert gate.scores["user_speech_fidelity"].value == 0.0
    assert len(server.posts("/chat/completions")) == 3


def test_the_audio_judge_overrules_the_asr_proxy(
    server: FakeOpenAIServer, asr_server: FakeOpenAIServer, scenario: Scenario
) -> None:
    rated = chat_text(json.dumps({"transcript": "words", "rating": 3, "evidence": "clear"}))
    server.push(rated, rated, rated)
    spec = {"provider": "openai", "base_url": server.url, "model": "audio-judge", **FAST}
    heard = create_provider("audio_llm", {**spec, "schema_retries": 0})
    judge = Judge(heard, modality="audio")
    # the scoring ASR misheard
    resources = hearing(asr_server, "My member ID is KX493B7.", audio_judge=lambda: judge)
    gate = user_speech(record(scenario, tracks=True), resources)
    assert gate.status == "pass" and gate.details["decided_by"] == "user_speech_fidelity"
    assert gate.scores["user_speech_fidelity_asr"].value == 0.0  # kept, but not decisive


def test_without_an_audio_judge_the_asr_check_decides_only_when_asked(
    asr_server: FakeOpenAIServer, scenario: Scenario
) -> None:
    resources = hearing(asr_server, "My member ID is KX492B7.")
    gate = user_speech(record(scenario, tracks=True), resources, asr_decides=True)
    assert gate.status == "pass" and gate.details["decided_by"] == "user_speech_fidelity_asr"
    assert gate.details["user_speech_fidelity"]["error"].startswith("no audio judge")


def test_by_default_the_asr_check_is_advisory(
    asr_server: FakeOpenAIServer, scenario: Scenario
) -> None:
    # a miss, which may be the ASR's own
    gate = user_speech(
        record(scenario, tracks=True), hearing(asr_server, "My member ID is KX493B7.")
    )
    assert gate.status == "not_run" and "asr_speech_gate: false" in str(gate.reason)
    assert gate.details["asr_check"].startswith("user_speech_fidelity_asr: turn 1 missed")
    assert gate.scores["user_speech_fidelity_asr"].value == 0.0  # still stored as a diagnostic
