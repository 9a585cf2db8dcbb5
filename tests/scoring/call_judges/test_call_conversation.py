"""The judge's view of a call: backchannels are shown as acknowledgements, outside the turns."""

from __future__ import annotations

from voxeval.scoring.call_judges.call_conversation import call_conversation
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.simulation.timeline import SpeakerSegment, Timeline


def test_backchannels_are_labelled_and_kept_out_of_the_agent_turns() -> None:
    seg = SpeakerSegment
    timeline = Timeline(
        segments=[
            seg("assistant", 0.0, 1.0, 0, "Clinic line, how can I help?"),
            seg("user", 1.5, 2.5, 0, "I need to move", "i need to move"),
            seg("assistant", 2.7, 3.0, 0, "mm-hm", backchannel=True),
            seg("user", 3.5, 4.5, 0, "my appointment.", "my appointment"),
            seg("assistant", 5.0, 8.0, 1, "Sure, which day suits you?"),
            seg("user", 6.0, 6.3, 0, "mm-hm", "", backchannel=True),
        ]
    )
    conversation = call_conversation(LiveCallRecord(timeline=timeline, pipeline="cascade"))
    assert conversation is not None
    assert conversation.transcript.splitlines() == [
        "[agent turn 0] Clinic line, how can I help?",
        "[caller turn 0] i need to move",
        "[agent backchannel] mm-hm",
        "[caller turn 0] my appointment",
        "[agent turn 1] Sure, which day suits you?",
        "[caller backchannel] mm-hm",
    ]
    assert conversation.agent_turns == {
        0: "Clinic line, how can I help?",
        1: "Sure, which day suits you?",
    }
