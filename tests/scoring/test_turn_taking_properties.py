"""Property tests: on any timeline, turn-taking scores stay in [0, 1] and a turn where the
agent interrupted the caller never scores above 0.5."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from voxeval.scoring.calls.turn_taking import AGENT_INTERRUPT_CAP, turn_taking_score
from voxeval.simulation.timeline import EndEvent, SpeakerSegment, Timeline, ToolEvent

_times = st.floats(min_value=0.0, max_value=60.0, allow_nan=False)
_durations = st.floats(min_value=0.01, max_value=8.0, allow_nan=False)


@st.composite
def timelines(draw: st.DrawFn) -> Timeline:
    segments = [
        SpeakerSegment(speaker, start, start + length, n)
        for n, (speaker, start, length) in enumerate(
            draw(
                st.lists(
                    st.tuples(st.sampled_from(["user", "assistant"]), _times, _durations),
                    min_size=1,
                    max_size=14,
                )
            )
        )
    ]
    tools = [ToolEvent(t, 0, "lookup", {}, {}) for t in draw(st.lists(_times, max_size=3))]
    reason = draw(
        st.sampled_from(["user_end_call", "agent_end_call", "agent_timeout", "agent_error",
                         "max_duration"])
    )  # fmt: skip
    return Timeline(segments=segments, tools=tools, end=EndEvent(70.0, reason))


@settings(max_examples=300, deadline=None)
@given(timelines())
def test_scores_are_bounded(timeline: Timeline) -> None:
    score = turn_taking_score(timeline)
    assert score.value is not None and 0.0 <= score.value <= 1.0
    for turn in score.details["turns"]:
        assert 0.0 <= turn["score"] <= 1.0
        if turn["reason"] in ("agent_interrupt", "dual_interrupt"):
            assert turn["score"] <= AGENT_INTERRUPT_CAP
        for name in ("overlap_score", "count_score"):
            if name in turn["evidence"]:
                assert 0.0 <= turn["evidence"][name] <= AGENT_INTERRUPT_CAP
