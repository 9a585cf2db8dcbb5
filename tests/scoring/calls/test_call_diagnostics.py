"""Diagnostics of a live call: auth, latency, STT WER, tool validity, entities, clean end."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.simulation.helpers import scenario, write_suite
from voxeval.benchmarks.eva.clinic_calls import CLINIC_CALLS_PATH
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.cli.main import app
from voxeval.protocols import live_call as live_call_protocol
from voxeval.protocols import single_turn
from voxeval.registry import lookup, names
from voxeval.scoring.calls.call_diagnostics import (
    authentication_success,
    conversation_finished,
    entity_key,
    entity_variants,
    key_entity_accuracy,
    response_latency,
    stt_wer,
    tool_call_validity,
)
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.simulation.timeline import EndEvent, SpeakerSegment, Timeline, ToolEvent


def user(start: float, end: float, turn: int, said: str, heard: str) -> SpeakerSegment:
    return SpeakerSegment("user", start, end, turn, intended_text=said, transcript=heard)


def agent(start: float, end: float, turn: int) -> SpeakerSegment:
    return SpeakerSegment("assistant", start, end, turn, intended_text="ok")


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
    not_applicable = authentication_success(nobody)  # nothing to check, not a pass
    assert not_applicable.value is None and "expects no" in str(not_applicable.error)
    absent = LiveCallRecord(expected_db={"session": {"pin": None}}, final_db={"session": {}})
    assert authentication_success(absent).value == 1.0
    assert authentication_success(LiveCallRecord()).error


def test_response_latency_split_by_tool_calls() -> None:
    score = response_latency(LiveCallRecord(timeline=call_timeline()))
    assert score.value == pytest.approx((1.0 + 0.5 + 0.7) / 3)
    assert score.details["mean_with_tool_s"] == pytest.approx(1.0)
    assert score.details["mean_without_tool_s"] == pytest.approx(0.6)
    assert score.details["n_with_tool"] == 1
    assert score.details["answered_turns"] == 3 and score.details["early_starts"] == 0


def test_response_latency_counts_early_starts_apart() -> None:
    """Golden: turn 2 is answered 0.8 s before the caller finished (the agent started talking
    over the rest of the caller's turn); it is an early start, not a latency of -0.8 s."""
    timeline = Timeline(
        segments=[
            agent(0.0, 1.0, 0),  # greeting (turn 0)
            user(1.5, 3.0, 0, "hello", "hello"),
            agent(4.0, 5.0, 1),  # turn 1: +1.0 s after the user, with a tool call
            user(6.0, 8.5, 1, "my member id is", "my member id is"),
            agent(7.7, 8.6, 2),  # turn 2: starts 8.5 - 7.7 = 0.8 s before the caller ends
            user(9.0, 10.0, 2, "thanks", "thanks"),
            agent(10.5, 11.0, 3),  # +0.5 s, no tool
            user(11.5, 12.0, 3, "bye", ""),  # not answered: the caller hung up
        ],
        tools=[ToolEvent(3.5, 1, "verify_patient", {}, {}, "auth")],
        end=EndEvent(12.0, "user_end_call"),
    )
    score = response_latency(LiveCallRecord(timeline=timeline))
    assert score.value == pytest.approx(0.75)  # (1.0 + 0.5) / 2; the old mean was 0.2333
    assert score.details["per_turn_s"] == pytest.approx([1.0, 0.5])
    assert score.details["answered_turns"] == 2
    assert score.details["early_starts"] == 1
    assert score.details["early_by_s"] == pytest.approx([0.8])
    assert score.details["unanswered_turns"] == 1
    assert score.details["mean_with_tool_s"] == pytest.approx(1.0)
    assert score.details["mean_without_tool_s"] == pytest.approx(0.5)
    assert score.details["n_with_tool"] == 1 and score.details["n_without_tool"] == 1


def test_response_latency_with_only_early_starts_is_not_run() -> None:
    timeline = Timeline(
        segments=[
            user(0.0, 3.0, 0, "i need", "i need"),
            agent(2.0, 2.5, 0),  # starts 1.0 s before the caller ends
        ],
        end=EndEvent(3.0, "agent_end_call"),
    )
    score = response_latency(LiveCallRecord(timeline=timeline))
    assert score.value is None and score.error is not None and "before" in score.error
    assert score.details["early_starts"] == 1 and score.details["answered_turns"] == 0
    assert score.details["early_by_s"] == pytest.approx([1.0])  # 3.0 - 2.0


def test_default_metric_lists_of_both_protocols_are_registered() -> None:
    registered = set(names("metric"))
    live = [*live_call_protocol.DEFAULT_METRICS, *live_call_protocol.DIAGNOSTICS]
    for name in [*live, *single_turn.DEFAULT_METRICS]:
        assert name in registered, name
    assert live_call_protocol.default_metrics() == live
    assert "authentication_success" in live_call_protocol.default_metrics()


def test_a_misspelt_default_metric_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    misspelt = ("auth_success", *live_call_protocol.DIAGNOSTICS[1:])
    monkeypatch.setattr(live_call_protocol, "DIAGNOSTICS", misspelt)
    with pytest.raises(RuntimeError, match="auth_success"):
        live_call_protocol.default_metrics()


def test_a_misspelt_default_metric_fails_at_plan_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(live_call_protocol, "DIAGNOSTICS", ("auth_success",))
    config = {
        "suite": str(write_suite(tmp_path / "suite", [scenario("book-1")])),
        "systems": [{"name": "good", "type": "scripted"}],
        "simulation": {"caller": "scripted", "mode": "text"},
    }
    path = tmp_path / "live.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(tmp_path / "run")])
    assert result.exit_code != 0
    assert "auth_success" in result.output
    assert not list((tmp_path / "run").rglob("call.json"))  # no call was made


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


def test_response_latency_numbers_turns_like_turn_taking() -> None:
    """Golden: the caller resuming over the agent opens a new turn (reference numbering), so
    its speech after the pause is answered on its own latency, not an early start."""
    timeline = Timeline(
        segments=[
            agent(0.0, 1.0, 0),  # greeting, turn 0
            user(1.5, 3.0, 0, "hello", "hello"),
            agent(4.0, 5.0, 1),  # turn 1: 4.0 - 3.0 = 1.0 s, with a tool call
            user(6.0, 7.0, 1, "my member id is", "my member id is"),
            agent(7.7, 8.6, 2),  # turn 2: 7.7 - 7.0 = 0.7 s
            user(8.0, 8.5, 1, "", ""),  # starts over the agent: opens turn 3 ...
            user(9.0, 10.0, 2, "thanks", "thanks"),  # ... which this joins (no reply between)
            agent(10.5, 11.0, 3),  # turn 3: 10.5 - 10.0 = 0.5 s
            user(11.5, 12.0, 3, "bye", ""),  # turn 4, unanswered: the caller hung up
        ],
        tools=[ToolEvent(3.5, 1, "verify_patient", {}, {}, "auth")],
        end=EndEvent(12.0, "user_end_call"),
    )
    score = response_latency(LiveCallRecord(timeline=timeline))
    assert score.details["per_turn_s"] == pytest.approx([1.0, 0.7, 0.5])
    assert score.value == pytest.approx(2.2 / 3)  # (1.0 + 0.7 + 0.5) / 3
    assert score.details["early_starts"] == 0 and score.details["unanswered_turns"] == 1


def backchannel(start: float, end: float, turn: int, heard: str = "") -> SpeakerSegment:
    return SpeakerSegment("user", start, end, turn, "mm-hm", heard, backchannel=True)


def test_stt_wer_leaves_out_the_callers_backchannels() -> None:
    """Golden: the caller's "mm-hm" over the agent's reply is not transcribed by the agent;
    it is not a deletion (counted, it would add 2 missing words to the 3 said)."""
    timeline = Timeline(
        segments=[
            user(0, 1, 0, "hello there", "hello there"),
            agent(1.5, 4.0, 0),
            backchannel(2.0, 2.3, 0),
            user(4.5, 5.0, 1, "thanks", "thanks"),
            agent(5.5, 6.0, 1),
        ]
    )
    score = stt_wer(LiveCallRecord(timeline=timeline))
    assert score.value == 0.0
    assert score.details["segments"] == 2 and score.details["ref_words"] == 3


def test_a_backchannel_is_not_an_unanswered_turn() -> None:
    """Golden: greeting; caller 1.5-3.0; agent 3.5-6.0 with the caller's "mm-hm" at 5.0-5.3;
    the call ends. One answered turn (0.5 s), nothing left unanswered."""
    timeline = Timeline(
        segments=[
            agent(0.0, 1.0, 0),
            user(1.5, 3.0, 0, "hello", "hello"),
            agent(3.5, 6.0, 1),
            backchannel(5.0, 5.3, 0, "mm-hm"),
        ],
        end=EndEvent(7.0, "user_end_call"),
    )
    score = response_latency(LiveCallRecord(timeline=timeline))
    assert score.details["per_turn_s"] == [pytest.approx(0.5)]
    assert score.details["unanswered_turns"] == 0
