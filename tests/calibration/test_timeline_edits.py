"""Timeline edits on a tiny hand-built call: times shift, turns renumber, transcripts follow."""

from __future__ import annotations

import pytest

from voxeval.calibration.timeline_edits import (
    SECONDS_PER_WORD,
    TURN_GAP_S,
    end_with_caller,
    insert_exchange,
    remove_exchange,
    sentences,
    set_turn_text,
    turn_text,
)
from voxeval.simulation.timeline import EndEvent, SpeakerSegment, Timeline, ToolEvent


def call() -> Timeline:
    """agent 0 (0-2) / caller 0 (3-4) / tool + agent 1 (5-7) / caller 1 (8-9) / agent 2."""
    return Timeline(
        segments=[
            SpeakerSegment("assistant", 0.0, 2.0, 0, "Hello, how can I help?"),
            SpeakerSegment("user", 3.0, 4.0, 0, "My id is A1.", transcript="My id is A1."),
            SpeakerSegment("assistant", 5.0, 7.0, 1, "Found it. Anything else?"),
            SpeakerSegment("user", 8.0, 9.0, 1, "No thanks.", transcript="No thanks."),
            SpeakerSegment("assistant", 10.0, 11.0, 2, "Goodbye."),
        ],
        tools=[ToolEvent(4.9, 1, "lookup", {"id": "A1"}, {"ok": True}, kind="read")],
        end=EndEvent(11.5, "agent_end_call"),
    )


def test_set_turn_text_moves_later_events_by_the_length_difference() -> None:
    edited = set_turn_text(call(), "user", 0, "My id is A1 and my name is Bo.")
    said = edited.speech("user")[0]
    assert said.intended_text == said.transcript == "My id is A1 and my name is Bo."
    assert said.end == pytest.approx(3.0 + 9 * SECONDS_PER_WORD)
    delta = said.end - 4.0
    assert edited.tools[0].t == pytest.approx(4.9 + delta)
    assert edited.speech("assistant")[1].start == pytest.approx(5.0 + delta)
    assert edited.end is not None and edited.end.t == pytest.approx(11.5 + delta)
    assert edited.speech("assistant")[0].start == 0.0  # earlier events stay


def test_insert_exchange_renumbers_and_shifts() -> None:
    edited = insert_exchange(call(), 1, "Your id again?", "A1, as I said.")
    agent = edited.speech("assistant")
    user = edited.speech("user")
    assert [s.turn for s in agent] == [0, 1, 2, 3]
    assert [s.turn for s in user] == [0, 1, 2]
    assert agent[1].intended_text == "Your id again?" and user[1].intended_text == "A1, as I said."
    shift = (3 + 4) * SECONDS_PER_WORD + 2 * TURN_GAP_S
    assert edited.tools[0].turn == 2 and edited.tools[0].t == pytest.approx(4.9 + shift)
    assert agent[2].start == pytest.approx(5.0 + shift)
    assert agent[1].start >= user[0].end and user[1].end <= edited.tools[0].t


def test_remove_exchange_pulls_later_events_back() -> None:
    edited = remove_exchange(call(), 1)
    assert [s.intended_text for s in edited.speech("assistant")] == [
        "Hello, how can I help?",
        "Goodbye.",
    ]
    assert [s.turn for s in edited.segments] == [0, 0, 1]
    assert edited.tools == []
    assert edited.speech("assistant")[1].start == pytest.approx(4.9)


def test_end_with_caller_cuts_the_rest() -> None:
    edited = end_with_caller(call(), 1, "Never mind, bye.")
    assert edited.segments[-1].intended_text == "Never mind, bye."
    assert edited.end is not None and edited.end.reason == "user_end_call"
    assert len(edited.speech("assistant")) == 2 and len(edited.tools) == 1
    assert turn_text(edited, "user", 1) == "Never mind, bye."


def test_sentences_do_not_split_after_a_title() -> None:
    assert sentences("I see Dr. Alvarez at 9. Shall I book it?") == [
        "I see Dr. Alvarez at 9.",
        "Shall I book it?",
    ]
