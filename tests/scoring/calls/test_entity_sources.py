"""The entities a speech-to-speech agent had been given: from the caller's turns and from tool
results, up to the turn being rated, each once with its first source."""

from __future__ import annotations

from voxeval.scoring.calls.entity_sources import (
    SourcedEntity,
    entities_given_by,
    tool_result_entities,
)
from voxeval.simulation.timeline import SpeakerSegment, Timeline, ToolEvent


def test_tool_results_are_walked_for_codes_dates_amounts_and_names() -> None:
    result = {
        "status": "confirmed",
        "booking": {"code": "ZKLX8E", "date": "2026-03-06", "doctor_name": "Dr. Amara Okafor"},
        "charges": [{"amount": "$45.50"}, {"amount": "$45.50"}],
        "slots": 3,
        "paid": False,
        "note": "A very long description of the visit that is not a name at all",
    }
    assert tool_result_entities(result) == ["ZKLX8E", "2026-03-06", "Dr. Amara Okafor", "$45.50"]


def test_entities_come_from_the_caller_and_tools_up_to_the_turn() -> None:
    seg = SpeakerSegment
    timeline = Timeline(
        segments=[
            seg("assistant", 0.0, 1.0, 0, "Hello."),
            seg("user", 1.5, 2.5, 0, "My ID is KX492B7."),
            seg("assistant", 3.0, 4.0, 1, "Found it."),
            seg("user", 4.5, 5.5, 1, "Is KX492B7 booked for March 6th?"),
            seg("assistant", 6.0, 7.0, 2, "Yes."),
        ],
        tools=[
            ToolEvent(2.8, 1, "lookup", {"member_id": "KX492B7"}, {"member_id": "KX492B7"}),
            ToolEvent(5.8, 2, "book", {"day": "friday"}, {"confirmation": "R7741"}),
        ],
    )
    assert entities_given_by(timeline, 0, 1.0) == []
    assert entities_given_by(timeline, 1, 4.0) == [SourcedEntity("KX492B7", "caller turn 0")]
    assert entities_given_by(timeline, 2, 7.0) == [
        SourcedEntity("KX492B7", "caller turn 0"),
        SourcedEntity("March 6th", "caller turn 1"),
        SourcedEntity("R7741", "tool book (agent turn 2)"),
    ]
