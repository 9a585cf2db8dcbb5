"""What the judged call metrics show a judge: the stored call as a chronological transcript
(caller speech, agent speech, tool calls with their results) plus the agent's policy.

Caller speech is shown as the agent received it: for a cascade, its own speech-to-text
transcript (it cannot be blamed for what its ASR got wrong, only for not clarifying); for a
system that hears audio itself, the words the caller meant to say (mishearing is its fault).
Agent speech is the text the agent intended to say. Backchannels ("mm-hm" said while the
other party talks) are shown as such, outside the turn numbering, so the judge reads them as
acknowledgements, not as turns to answer; they are not part of the agent's turn texts."""

from __future__ import annotations

import json
from dataclasses import dataclass

from voxeval.json_types import JSONReadValue
from voxeval.scoring.calls.call_pipeline import hears_audio
from voxeval.scoring.calls.floor_speech import floor_speech, turn_texts
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.simulation.timeline import SpeakerSegment, ToolEvent


@dataclass(frozen=True)
class CallConversation:
    transcript: str
    agent_turns: dict[int, str]  # agent turn number -> what it intended to say (non-empty)
    pipeline: str
    hears_audio: bool
    policy: str
    role: str
    tools: str
    current_date_time: str

    def agent_turns_text(self) -> str:
        return "\n\n".join(f"[agent turn {n}]\n{text}" for n, text in self.agent_turns.items())

    def facts(self) -> dict[str, str | int]:
        """What the score's details record about the input the judge saw."""
        return {
            "pipeline": self.pipeline,
            "caller_text": "intended" if self.hears_audio else "agent_transcript",
            "agent_turns": len(self.agent_turns),
        }


def _json(value: JSONReadValue) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _caller_line(seg: SpeakerSegment, audio_native: bool) -> str:
    text = seg.said_text if audio_native or not seg.transcript else seg.transcript
    if seg.backchannel:
        return f"[caller backchannel] {text.strip() or '(inaudible)'}"
    return f"[caller turn {seg.turn}] {text.strip() or '(inaudible)'}"


def _agent_line(seg: SpeakerSegment) -> str:
    if seg.backchannel:
        return f"[agent backchannel] {seg.intended_text.strip() or '(inaudible)'}"
    notes = [n for n, on in (("fallback reprompt", seg.nudge), ("cut off", seg.interrupted)) if on]
    suffix = f" ({', '.join(notes)})" if notes else ""
    line = f"[agent turn {seg.turn}]{suffix} {seg.said_text.strip() or '(silence)'}"
    if seg.interrupted and seg.cut_reason and seg.said_text != seg.intended_text:
        line += f" [meant to say: {seg.intended_text.strip()}]"
    return line


def _tool_line(tool: ToolEvent) -> str:
    call = f"{tool.name}({_json(tool.arguments)})"
    line = f"[agent turn {tool.turn}] TOOL {call} -> {_json(tool.result)}"
    if not tool.valid:
        line += f"  [invalid call: {tool.error or 'rejected'}]"
    return line


def call_conversation(record: LiveCallRecord) -> CallConversation | None:
    """The judge's view of the call; None when the call left no timeline."""
    timeline = record.timeline
    if timeline is None:
        return None
    user_transcripts = any(s.transcript for s in timeline.speech("user"))
    audio_native = hears_audio(record.pipeline, user_transcripts)
    events: list[tuple[float, int, str]] = []
    firsts = {t.turn: t.start for t in turn_texts(timeline, "user")}
    for seg in timeline.segments:
        if seg.speaker == "user":
            later_piece = not seg.backchannel and seg.start > firsts.get(seg.turn, seg.start)
            if later_piece and not audio_native and not seg.transcript:
                continue  # the agent's transcript of the turn sits on its first piece
            events.append((seg.start, 1, _caller_line(seg, audio_native)))
        else:
            events.append((seg.start, 1, _agent_line(seg)))
    events += [(tool.t, 0, _tool_line(tool)) for tool in timeline.tools]
    events.sort(key=lambda e: (e[0], e[1]))
    agent_turns: dict[int, list[str]] = {}
    for seg in floor_speech(timeline, "assistant"):
        if seg.intended_text.strip():
            agent_turns.setdefault(seg.turn, []).append(seg.intended_text.strip())
    scenario = record.scenario
    agent = scenario.agent if scenario is not None else None
    return CallConversation(
        transcript="\n".join(line for _, _, line in events) or "(no speech)",
        agent_turns={n: " ".join(parts) for n, parts in sorted(agent_turns.items())},
        pipeline=record.pipeline,
        hears_audio=audio_native,
        policy=agent.instructions if agent is not None else "",
        role=agent.role if agent is not None else "",
        tools=_json(agent.tools) if agent is not None else "[]",
        current_date_time=scenario.current_date_time if scenario is not None else "",
    )
