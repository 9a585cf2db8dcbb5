"""Diagnostics of a live call: auth, latency, STT WER, tool validity, entities, clean end."""

from __future__ import annotations

import pytest

from voxeval.benchmarks.clinic_calls import CLINIC_CALLS_PATH
from voxeval.benchmarks.scenario import load_scenario_suite
from voxeval.registry import lookup
from voxeval.scoring.call_diagnostics import (
    authentication_success,
    conversation_finished,
    entity_key,
    entity_variants,
    key_entity_accuracy,
    response_latency,
    stt_wer,
    tool_call_validity,
)
from voxeval.scoring.live_call_record import LiveCallRecord
from voxeval.simulation.timeline import EndEvent, SpeechSegment, Timeline, ToolEvent


def user(start: float, end: float, turn: int, said: str, heard: str) -> SpeechSegment:
    return SpeechSegment("user", start, end, turn, intended_text=said, transcript=heard)


def agent(start: float, end: float, turn: int) -> SpeechSegment:
    return SpeechSegment("assistant", start, end, turn, intended_text="ok")


def call_timeline() -> Timeline:
    return Timeline(
        segments=[
            agent(0.0, 1.0, 0),
            user(1.5, 4.0, 0, "My member ID is KX4-92B7.", "my member id is kx4 92 b7"),
            agent(5.0, 6.0, 1),  # 1.0 s, with a tool call
            user(6.5, 8.0, 1, "Born November 2nd, 1979", "born november 2 1979"),
            agent(8.5, 9.0, 2),  # 0.5 s, no tool
            user(9.5, 10.0, 2, "Lindqvist, L I N D Q V I S T.", "linkvist"),
            agent(10.7, 11.0, 3),  # 0.7 s, no tool
        ],
        tools=[
            ToolEvent(4.5, 1, "verify_patient", {}, {}, "auth", valid=True),
            ToolEvent(4.6, 1, "list_appointments", {"x": 1}, {}, "read", valid=False, error="bad"),
        ],
        end=EndEvent(12.0, "user_end_call"),
    )


def test_all_diagnostics_are_registered() -> None:
    for name in ("authentication_success", "response_latency", "stt_wer", "tool_call_validity",
                 "key_entity_accuracy", "conversation_finished"):  # fmt: skip
        assert callable(lookup("metric", name))


def test_authentication_success() -> None:
    expected = {"session": {"member_id": "KX4-92B7"}}
    actual = {"session": {"member_id": "kx4-92b7"}}
    ok = authentication_success(LiveCallRecord(expected_db=expected, final_db=actual))
    assert ok.value == 1.0
    bad = authentication_success(LiveCallRecord(expected_db=expected, final_db={"session": {}}))
    assert bad.value == 0.0 and "member_id" in bad.details["mismatched"]
    nobody = LiveCallRecord(expected_db={"session": {}}, final_db={"session": {"member_id": "X"}})
    assert authentication_success(nobody).value == 0.0
    assert authentication_success(LiveCallRecord()).error


def test_response_latency_split_by_tool_calls() -> None:
    score = response_latency(LiveCallRecord(timeline=call_timeline()))
    assert score.value == pytest.approx((1.0 + 0.5 + 0.7) / 3)
    assert score.details["mean_with_tool_s"] == pytest.approx(1.0)
    assert score.details["mean_without_tool_s"] == pytest.approx(0.6)
    assert score.details["n_with_tool"] == 1


def test_stt_wer_against_intended_text() -> None:
    score = stt_wer(LiveCallRecord(timeline=call_timeline()))
    assert score.value is not None and 0 < score.value < 1
    assert score.details["segments"] == 3
    assert score.value == score.details["errors"] / score.details["ref_words"]
    s2s = Timeline(segments=[user(0, 1, 0, "hello there", "")])
    assert stt_wer(LiveCallRecord(timeline=s2s)).error is not None
    perfect = Timeline(segments=[user(0, 1, 0, "Hello, there!", "hello there")])
    assert stt_wer(LiveCallRecord(timeline=perfect)).value == 0.0


def test_tool_call_validity_share() -> None:
    score = tool_call_validity(LiveCallRecord(timeline=call_timeline()))
    assert score.value == 0.5 and score.passed is False
    assert score.details["invalid"] == [{"name": "list_appointments", "error": "bad"}]
    assert tool_call_validity(LiveCallRecord(timeline=Timeline())).error


def test_entity_normalisation() -> None:
    assert entity_key("K X 4, nine 2 B 7") == "kx492b7"
    assert entity_key("KX4-92B7") == "kx492b7"
    assert entity_key("November 2nd, 1979") in entity_variants("1979-11-02")


def test_key_entity_accuracy() -> None:
    scenario = load_scenario_suite(CLINIC_CALLS_PATH).get("clinic-s01-reschedule-free")
    score = key_entity_accuracy(LiveCallRecord(timeline=call_timeline(), scenario=scenario))
    # member ID and date of birth were heard right; the last name was misheard
    assert score.value == pytest.approx(2 / 3)
    wrong = [m for m in score.details["mentions"] if not m["correct"]]
    assert [m["entity"] for m in wrong] == ["last name"]
    assert key_entity_accuracy(LiveCallRecord(timeline=call_timeline())).error


def test_conversation_finished() -> None:
    assert conversation_finished(LiveCallRecord(timeline=call_timeline())).value == 1.0
    timed_out = Timeline(end=EndEvent(30.0, "agent_timeout"))
    assert conversation_finished(LiveCallRecord(timeline=timed_out)).value == 0.0
    assert conversation_finished(LiveCallRecord(timeline=Timeline())).error


def test_stt_wer_skips_the_goodbye_the_agent_never_heard() -> None:
    timeline = Timeline(
        segments=[
            user(0, 1, 0, "hello there", "hello there"),
            agent(1.5, 2.5, 0),
            user(3, 4, 1, "thanks goodbye", ""),  # caller hangs up; agent never processes it
        ]
    )
    score = stt_wer(LiveCallRecord(timeline=timeline))
    assert score.value == 0.0
    assert score.details["segments"] == 1


def test_stt_wer_counts_an_unheard_turn_the_agent_answered() -> None:
    timeline = Timeline(
        segments=[
            user(0, 1, 0, "hello there", "hello there"),
            agent(1.5, 2.5, 0),
            user(3, 4, 1, "my member id", ""),
            agent(4.5, 5.0, 1),
        ]
    )
    score = stt_wer(LiveCallRecord(timeline=timeline))
    assert score.details["deletions"] == 3
    assert score.value == pytest.approx(3 / 5)
