"""Edits of a recorded call timeline that keep it internally consistent: a changed turn keeps
its transcript in step with its text, an inserted or removed exchange shifts the later events
in time and renumbers the later turns of both parties, so the result reads like a call a real
system could have produced."""

from __future__ import annotations

import re
from dataclasses import replace

from voxeval.simulation.timeline import EndEvent, Speaker, SpeakerSegment, Timeline, ToolEvent

SECONDS_PER_WORD = 0.4  # the text-mode clock of the simulation engine
TURN_GAP_S = 0.6
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def speech_seconds(text: str) -> float:
    return max(1, len(text.split())) * SECONDS_PER_WORD


_ABBREVIATION = re.compile(r"\b(?:Dr|Mr|Mrs|Ms|St|No)\.$")


def sentences(text: str) -> list[str]:
    """The text's sentences; a title such as "Dr." does not end one."""
    out: list[str] = []
    for piece in _SENTENCE_END.split(text.strip()):
        if out and _ABBREVIATION.search(out[-1]):
            out[-1] = f"{out[-1]} {piece}"
        elif piece:
            out.append(piece)
    return out


def turn_text(timeline: Timeline, speaker: Speaker, turn: int) -> str:
    return " ".join(
        s.intended_text for s in timeline.speech(speaker) if s.turn == turn and s.intended_text
    ).strip()


def set_turn_text(timeline: Timeline, speaker: Speaker, turn: int, text: str) -> Timeline:
    """The turn says ``text`` (its transcript too, where it had one), and lasts as long as the
    new text takes to say: later events move by the difference."""
    segments = [s for s in timeline.segments if s.speaker == speaker and s.turn == turn]
    if not segments:
        raise ValueError(f"no {speaker} turn {turn} on the timeline")
    first = min(segments, key=lambda s: s.start)
    old_end = max(s.end for s in segments)
    new_end = first.start + speech_seconds(text)
    edited = replace(
        first,
        intended_text=text,
        transcript=text if any(s.transcript for s in segments) else "",
        end=new_end,
    )
    kept = [s for s in timeline.segments if s not in segments]
    out = Timeline(segments=[*kept, edited], tools=list(timeline.tools), end=timeline.end)
    out = shift_after(out, old_end, new_end - old_end, exclude=edited)
    out.segments.sort(key=lambda s: s.start)
    return out


def shift_after(
    timeline: Timeline, t: float, delta: float, exclude: SpeakerSegment | None = None
) -> Timeline:
    """Every event starting at or after ``t`` moves by ``delta`` seconds."""
    if delta == 0:
        return timeline
    segments = [
        s if s is exclude or s.start < t else replace(s, start=s.start + delta, end=s.end + delta)
        for s in timeline.segments
    ]
    tools = [e if e.t < t else replace(e, t=e.t + delta) for e in timeline.tools]
    end = timeline.end
    if end is not None and end.t >= t:
        end = replace(end, t=end.t + delta)
    return Timeline(segments=segments, tools=tools, end=end)


def _agent_turn_start(timeline: Timeline, turn: int) -> float:
    starts = [s.start for s in timeline.speech("assistant") if s.turn == turn]
    starts += [e.t for e in timeline.tools if e.turn == turn]
    if not starts:
        raise ValueError(f"no agent turn {turn} on the timeline")
    return min(starts)


def _renumber(timeline: Timeline, from_turn: int, by: int) -> Timeline:
    """Turns >= ``from_turn`` of both parties (and their tool calls) get ``turn + by``."""
    segments = [
        s if s.turn < from_turn else replace(s, turn=s.turn + by) for s in timeline.segments
    ]
    tools = [e if e.turn < from_turn else replace(e, turn=e.turn + by) for e in timeline.tools]
    return Timeline(segments=segments, tools=tools, end=timeline.end)


def insert_exchange(
    timeline: Timeline, before_agent_turn: int, agent_text: str, caller_text: str
) -> Timeline:
    """A new agent turn and the caller's answer, said just before agent turn
    ``before_agent_turn`` (which, with everything after it, moves later and is renumbered)."""
    pivot = _agent_turn_start(timeline, before_agent_turn) - 1e-4
    agent_s, caller_s = speech_seconds(agent_text), speech_seconds(caller_text)
    shifted = shift_after(timeline, pivot, agent_s + caller_s + 2 * TURN_GAP_S)
    shifted = _renumber(shifted, before_agent_turn, 1)
    start = pivot + 1e-4
    agent = SpeakerSegment(
        "assistant", start, start + agent_s, before_agent_turn, agent_text, transcript=agent_text
    )
    caller_start = agent.end + TURN_GAP_S
    caller = SpeakerSegment(
        "user",
        caller_start,
        caller_start + caller_s,
        before_agent_turn,
        caller_text,
        transcript=caller_text,
    )
    segments = sorted([*shifted.segments, agent, caller], key=lambda s: s.start)
    return Timeline(segments=segments, tools=shifted.tools, end=shifted.end)


def remove_exchange(timeline: Timeline, agent_turn: int) -> Timeline:
    """Agent turn ``agent_turn`` (with its tool calls) and the caller's answer to it are gone;
    later events move earlier and later turns are renumbered."""
    start = _agent_turn_start(timeline, agent_turn)
    gone = [s for s in timeline.segments if s.turn == agent_turn]
    if not gone:
        raise ValueError(f"no turn {agent_turn} on the timeline")
    next_turn = [
        s.start for s in timeline.segments if s.turn > agent_turn and s.speaker == "assistant"
    ]
    next_turn += [e.t for e in timeline.tools if e.turn > agent_turn]
    stop = min(next_turn) if next_turn else max(s.end for s in gone)
    kept = Timeline(
        segments=[s for s in timeline.segments if s.turn != agent_turn],
        tools=[e for e in timeline.tools if e.turn != agent_turn],
        end=timeline.end,
    )
    shifted = shift_after(kept, stop, start - stop)
    return _renumber(shifted, agent_turn + 1, -1)


def drop_tools(timeline: Timeline, keep: list[ToolEvent]) -> Timeline:
    return Timeline(segments=list(timeline.segments), tools=keep, end=timeline.end)


def end_with_caller(timeline: Timeline, caller_turn: int, text: str) -> Timeline:
    """The caller says ``text`` in turn ``caller_turn`` and hangs up: nothing after it
    happened."""
    segments = [s for s in timeline.segments if s.speaker == "user" and s.turn == caller_turn]
    if not segments:
        raise ValueError(f"no caller turn {caller_turn} on the timeline")
    start = min(s.start for s in segments)
    kept = Timeline(
        segments=[s for s in timeline.segments if s.start < start],
        tools=[e for e in timeline.tools if e.t < start],
        end=None,
    )
    first = min(segments, key=lambda s: s.start)
    said = replace(
        first,
        intended_text=text,
        transcript=text if first.transcript else "",
        end=start + speech_seconds(text),
    )
    kept.segments.append(said)
    kept.end = EndEvent(said.end + 0.1, "user_end_call")
    return kept
