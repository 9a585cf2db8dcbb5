"""The event timeline of a call (``events.jsonl``): one JSON object per line, times in seconds
from call start on the call's clock (virtual or wall)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from voxeval.atomic_files import write_text_atomic

Speaker = Literal["user", "assistant"]
# Why a speech segment stopped before the end of its text:
# - caller_speech: the agent stopped with caller speech (not a backchannel) on the line;
# - backchannel: the agent stopped with only a caller backchannel on the line;
# - no_caller_speech: the agent stopped with no caller speech at all (noise, its own choice);
# - talked_over: the caller gave up its turn while the agent talked over it;
# - call_end: the call ended while the speaker was still talking.
CUT_REASONS = ("caller_speech", "backchannel", "no_caller_speech", "talked_over", "call_end")


@dataclass(frozen=True)
class SpeakerSegment:
    """A stretch of one party's speech as it was heard on the line.

    ``turn`` numbers the party's turns from 0; ``interrupted`` is true when the speaker stopped
    early because the other party barged in; ``end`` is where the audio actually stopped;
    ``nudge`` marks an agent's fallback reprompt (said because no caller turn was detected,
    e.g. "are you still there?"), not a reply; ``backchannel`` marks a listener's short
    acknowledgement ("mm-hm") said while the other party talks, which is not a turn and does
    not ask the other party to stop. Calls recorded before these fields existed read them as
    ``False``.

    Every early stop is marked: ``interrupted`` is true whenever the speaker stopped before the
    end of ``intended_text``, for any reason, ``cut_reason`` says why (``CUT_REASONS``) and
    ``spoken_text`` holds the part of the intended text that went out (aligned by time; empty
    on a segment that was not cut and on calls recorded before these fields)."""

    speaker: Speaker
    start: float
    end: float
    turn: int
    intended_text: str = ""
    transcript: str = ""  # what the other party's ASR heard
    interrupted: bool = False
    nudge: bool = False
    backchannel: bool = False
    cut_reason: str | None = None
    spoken_text: str = ""

    @property
    def said_text(self) -> str:
        """What went out on the line: ``spoken_text`` when cut, else ``intended_text``."""
        return self.spoken_text if self.interrupted and self.cut_reason else self.intended_text


@dataclass(frozen=True)
class ToolEvent:
    t: float
    turn: int  # the assistant turn in which the call was made
    name: str
    arguments: dict[str, Any]
    result: Any
    kind: str = ""
    valid: bool = True
    error: str | None = None
    # arguments converted to the schema's type (``tool_arguments: coerce``): a diagnostic
    argument_mismatches: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class EndEvent:
    t: float
    reason: str  # user_end_call | agent_end_call | agent_timeout | max_duration | error


@dataclass
class Timeline:
    segments: list[SpeakerSegment] = field(default_factory=list)
    tools: list[ToolEvent] = field(default_factory=list)
    end: EndEvent | None = None

    def speech(self, speaker: Speaker) -> list[SpeakerSegment]:
        return sorted((s for s in self.segments if s.speaker == speaker), key=lambda s: s.start)

    def write_jsonl(self, path: Path) -> None:
        rows: list[dict[str, Any]] = [{"type": "speech", **asdict(s)} for s in self.segments]
        rows += [{"type": "tool_call", **asdict(t)} for t in self.tools]
        if self.end is not None:
            rows.append({"type": "end", **asdict(self.end)})
        rows.sort(key=lambda r: r.get("start", r.get("t", 0.0)))
        write_text_atomic(path, "".join(json.dumps(r, default=str) + "\n" for r in rows))

    @classmethod
    def read_jsonl(cls, path: Path) -> Timeline:
        timeline = cls()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            row = json.loads(line)
            kind = row.pop("type", None)
            if kind == "speech":
                timeline.segments.append(SpeakerSegment(**row))
            elif kind == "tool_call":
                timeline.tools.append(ToolEvent(**row))
            elif kind == "end":
                timeline.end = EndEvent(**row)
            else:
                raise ValueError(f"{path}:{n}: unknown event type {kind!r}")
        return timeline
