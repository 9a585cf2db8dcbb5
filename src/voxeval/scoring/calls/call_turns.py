"""Turn numbering of a live call, as the EVA-Bench reference numbers turns.

One pass over the call's speech in time order:

- turn 0 holds the agent's greeting (agent speech before the caller first speaks);
- the caller starting to speak opens a new turn only if the agent has spoken since the current
  turn began; otherwise the caller's speech joins the current turn. Caller speech the agent
  never answered is therefore merged with the caller's next speech into one turn;
- agent speech counts as "the agent has spoken" when it starts in silence, or, when it starts
  while the caller is still talking, only once its transcript arrives (at the end of the
  speech), as in the reference: a caller who goes on talking over such a reply stays in the
  same turn (greeting 0-1 s, caller 1.5-5.5, agent 4.5-6.0, caller 5.8-7.0, agent 7.6-8.5 is
  one scored turn);
- agent speech belongs to the turn that is current when it starts;
- the agent interrupted the caller in a turn when agent speech starts while caller speech of
  that turn is still playing;
- the caller interrupted the agent when caller speech starts while agent speech is playing; the
  flag goes on the new turn the caller opens (the turn that follows the interrupted reply);
- a tool call belongs to the turn that is current at its timestamp.

Backchannels ("mm-hm" said while the other party talks, ``SpeakerSegment.backchannel``) are
left out: they are neither a turn, nor a reply, nor an interruption. So a caller's pause
stays inside its turn when the agent only backchannels into it, and a caller's "mm-hm" during
the agent's reply neither opens a turn nor counts as the caller interrupting the agent.

At equal timestamps a segment ending is processed before one starting (touching segments do
not overlap), tool calls come between ends and starts, and caller starts before agent starts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from voxeval.simulation.timeline import SpeakerSegment, Timeline

Span = tuple[float, float]
GREETING_TURN = 0
_END, _TOOL, _USER_START, _AGENT_START = 0, 1, 2, 3


@dataclass
class CallTurns:
    """Per turn number: the speech spans of each side (in start order) and the turn flags."""

    user: dict[int, list[Span]] = field(default_factory=dict)
    agent: dict[int, list[Span]] = field(default_factory=dict)
    agent_interrupted: set[int] = field(default_factory=set)
    user_interrupted: set[int] = field(default_factory=set)
    tool_turns: set[int] = field(default_factory=set)
    first_tool_t: dict[int, float] = field(default_factory=dict)
    nudge_turns: set[int] = field(default_factory=set)  # agent turns holding a fallback nudge

    def answered(self) -> list[int]:
        """Turns with speech on both sides, in order (the greeting turn included)."""
        return sorted(t for t in self.user.keys() & self.agent.keys())

    def evaluable(self) -> list[int]:
        """The turns turn-taking scores: both sides spoke, the greeting turn excluded."""
        return [t for t in self.answered() if t != GREETING_TURN]

    def latency_s(self, turn: int) -> float:
        """First agent onset minus the end of the caller's last speech of the turn."""
        return self.agent[turn][0][0] - self.user[turn][-1][1]

    def last_speaker(self) -> str | None:
        """Whose speech ended last in the call (``user``/``assistant``), None without speech."""
        user_end = max((end for spans in self.user.values() for _, end in spans), default=None)
        agent_end = max((end for spans in self.agent.values() for _, end in spans), default=None)
        if user_end is None and agent_end is None:
            return None
        if agent_end is None or (user_end is not None and user_end > agent_end):
            return "user"
        return "assistant"


def number_turns(timeline: Timeline) -> CallTurns:
    events: list[tuple[float, int, int, SpeakerSegment | None]] = []
    for n, speech in enumerate(timeline.segments):
        if speech.backchannel:
            continue
        start_kind = _USER_START if speech.speaker == "user" else _AGENT_START
        events.append((speech.start, start_kind, n, speech))
        events.append((speech.end, _END, n, speech))
    for n, tool in enumerate(timeline.tools):
        events.append((tool.t, _TOOL, n, None))
    events.sort(key=lambda e: (e[0], e[1], e[2]))

    turns = CallTurns()
    turn, agent_spoke, user_started = GREETING_TURN, False, False
    open_user: set[int] = set()
    open_agent: set[int] = set()
    # agent speech that started over the caller: segment -> its turn, until its transcript
    # (its end) arrives and the agent counts as having spoken in that turn
    pending: dict[int, int] = {}
    for t, kind, n, seg in events:
        if kind == _END:
            (open_user if seg is not None and seg.speaker == "user" else open_agent).discard(n)
            if n in pending and pending.pop(n) == turn and seg is not None:
                agent_spoke = True
        elif kind == _TOOL:
            turns.tool_turns.add(turn)
            turns.first_tool_t.setdefault(turn, t)
        elif kind == _USER_START and seg is not None:
            interrupting = bool(open_agent)
            if agent_spoke:
                turn, agent_spoke, user_started = turn + 1, False, False
            if interrupting:
                turns.user_interrupted.add(turn)
            open_user.add(n)
            user_started = True
            turns.user.setdefault(turn, []).append((seg.start, seg.end))
        elif seg is not None:
            if open_user and user_started:
                turns.agent_interrupted.add(turn)
            open_agent.add(n)
            if open_user:
                pending[n] = turn
            else:
                agent_spoke = True
            turns.agent.setdefault(turn, []).append((seg.start, seg.end))
            if seg.nudge:
                turns.nudge_turns.add(turn)
    return turns
