"""Metrics read a caller turn split at pauses as one turn with each piece's own text, and a
cut segment as the words that went out (issue 38, point 3)."""

from __future__ import annotations

from voxeval.benchmarks.eva.clinic_calls import CLINIC_CALLS_PATH
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.scoring.call_judges.call_conversation import call_conversation
from voxeval.scoring.calls.call_diagnostics import key_entity_accuracy, stt_wer
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.simulation.timeline import EndEvent, SpeakerSegment, Timeline


def agent(start: float, end: float, turn: int) -> SpeakerSegment:
    return SpeakerSegment("assistant", start, end, turn, "Sure.")


def test_a_turn_split_at_a_pause_is_checked_as_one_turn() -> None:
    """The agent's transcript of a caller turn sits on its first piece; the entity was said
    in the second piece."""
    scenario = load_scenario_suite(CLINIC_CALLS_PATH).get("clinic-s01-reschedule-free")
    code = "KX4-92B7"
    assert code in scenario.entities.values()
    rec = LiveCallRecord(
        timeline=Timeline(
            segments=[
                agent(0.0, 1.0, 0),
                SpeakerSegment("user", 1.5, 2.5, 0, "my member ID is", f"my member ID is {code}"),
                SpeakerSegment("user", 3.5, 4.5, 0, code),
                agent(5.2, 6.0, 1),
            ],
            end=EndEvent(10.0, "user_end_call"),
        ),
        scenario=scenario,
    )
    assert key_entity_accuracy(rec).value == 1.0
    assert stt_wer(rec).value == 0.0


def test_the_judges_see_a_cut_reply_as_said_with_what_it_meant() -> None:
    cut = SpeakerSegment(
        "assistant", 3.5, 3.8, 1, "I can help with that. What is your ID?",
        interrupted=True, cut_reason="no_caller_speech", spoken_text="I can",
    )  # fmt: skip
    rec = LiveCallRecord(
        timeline=Timeline(
            segments=[agent(0.0, 1.0, 0), SpeakerSegment("user", 1.5, 3.0, 0, "hi"), cut],
            end=EndEvent(10.0, "user_end_call"),
        )
    )
    conv = call_conversation(rec)
    assert conv is not None
    assert (
        "[agent turn 1] (cut off) I can [meant to say: I can help with that. What is your ID?]"
        in conv.transcript
    )
