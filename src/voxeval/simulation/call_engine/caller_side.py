"""The simulated caller's side of a call: the turn it decided and when it says it, the turn
it is saying, what it heard of the agent since its last decision, and how it reacts when the
agent talks (backchannels, barge-in, yielding when talked over)."""

from __future__ import annotations

import numpy as np

from voxeval.audio import Audio
from voxeval.simulation.bus import FADE_S
from voxeval.simulation.call_engine.agent_speech import Spoken
from voxeval.simulation.call_engine.compute import CallCompute, ours
from voxeval.simulation.call_engine.ended import CallEnded
from voxeval.simulation.call_engine.frames import FrameGrid
from voxeval.simulation.call_engine.voices import CallVoices
from voxeval.simulation.caller_behaviour import (
    CallerBehaviour,
    ListeningPlan,
    ScheduledBehaviour,
    SpeakingPlan,
)
from voxeval.simulation.clock import Clock
from voxeval.simulation.latency import LatencyModel
from voxeval.simulation.line import CallerLine, LinePiece
from voxeval.simulation.parties import Caller, CallerTurn
from voxeval.simulation.personas import get_persona, response_gap
from voxeval.simulation.turn_detection import words_spoken


class CallerSide:
    """The caller's turn state on the line. ``gap_s``: its pause before answering (None:
    drawn from its persona with ``gap_rng``); ``yield_s``: how long it talks on over the
    agent before giving up its turn (None: never)."""

    def __init__(
        self,
        caller: Caller,
        grid: FrameGrid,
        line: CallerLine,
        voices: CallVoices,
        compute: CallCompute,
        latency: LatencyModel,
        rng: np.random.Generator,
        gap_rng: np.random.Generator,
        *,
        gap_s: float | None,
        yield_s: float | None,
        pause_s: float,
    ) -> None:
        self.caller, self.grid, self.line, self.voices = caller, grid, line, voices
        self.compute, self.latency = compute, latency
        self.rng, self.gap_rng = rng, gap_rng
        self.gap_s, self.yield_s = gap_s, yield_s
        self._fallback_behaviour = ScheduledBehaviour(pause_s=pause_s)
        self.user_turns = 0
        self.decided: CallerTurn | None = None  # its next turn, decided, not yet said
        self.decided_at: int | None = None  # when it starts saying it
        self.turn_end: int | None = None  # end of the turn it is saying (None: not speaking)
        self.turn_pieces: list[LinePiece] = []
        self.awaiting = False  # finished a turn, waits for the agent
        self.last_turn_end = 0
        self.hangs_up = False
        self.heard: list[Spoken] = []  # agent speech since its last decision
        self.yield_at: int | None = None

    @property
    def behaviour(self) -> CallerBehaviour:
        """The caller's own behaviour, read each time (a caller rebuilds it at ``start()``,
        e.g. for the scenario's language); a caller without one pauses only where its text
        marks a pause and never barges in or backchannels."""
        own = self.caller.behaviour
        return own if own is not None else self._fallback_behaviour

    def speaking_plan(self, text: str) -> SpeakingPlan:
        return ours(
            "simulator",
            "caller speaking plan",
            self.compute.laned,
            self.behaviour.speaking_plan,
            text,
        )

    def listening_plan(self, text: str, duration_s: float) -> ListeningPlan:
        return ours(
            "simulator",
            "caller listening plan",
            self.compute.laned,
            self.behaviour.listening_plan,
            text,
            duration_s,
        )

    def gap(self) -> float:
        """The caller's silence before answering: the set gap, else its persona's draw."""
        if self.gap_s is not None:
            return self.gap_s
        persona = self.caller.persona
        return response_gap(persona if persona is not None else get_persona(None), self.gap_rng)

    def place(self, turn: CallerTurn, start: int, backchannel: bool = False) -> None:
        """Place the caller's ``turn`` on the line from ``start`` (its speaking plan)."""
        index = self.user_turns if not backchannel else max(0, self.user_turns - 1)
        rate_factor = float(self.caller.speech_rate)
        placed = self.voices.caller_pieces(
            turn, start, index, backchannel, rate_factor, self.speaking_plan
        )
        if not backchannel:
            self.turn_pieces = placed
            self.turn_end = placed[-1].end
            self.user_turns += 1

    def what_heard(
        self, playing: Spoken | None, until: int | None = None
    ) -> tuple[Audio | None, str]:
        """The agent speech the caller heard since its last decision (``until``: it is
        barging in on the agent's current utterance, ``playing``, at that sample)."""
        parts = list(self.heard)
        if until is not None and playing is not None:
            parts.append(playing)
        texts = []
        for p in parts:
            if until is not None and p is playing:
                frac = (until - p.onset) / p.length if p.length else 1.0
                texts.append(words_spoken(p.turn.text or "", frac))
            else:
                texts.append(p.heard_text())
        text = " ".join(t for t in texts if t).strip()
        if self.voices.mode == "text":
            return None, text
        pieces: list[np.ndarray] = []
        gap = np.zeros(round(0.3 * self.grid.rate), np.float32)
        for p in parts:
            if p.utterance.audio is None:
                continue
            end = p.end if until is None else min(p.end, until)
            pieces += [p.utterance.audio.samples[: max(0, end - p.onset)], gap]
        audio = Audio(np.concatenate(pieces) if pieces else gap, self.grid.rate, "<agent speech>")
        return audio, text

    def decide(self, at: int, clock: Clock, playing: Spoken | None, barge: bool = False) -> None:
        """The caller decides its next turn at ``at`` (after hearing the agent; ``barge``: it
        cuts in on ``playing``)."""
        clock.wait_until(self.grid.s(at))
        audio, text = self.what_heard(playing, at if barge else None)
        # a caller that cuts in may say something else than its answer (``interrupt``)
        answer = self.caller.interrupt if barge else self.caller.respond
        turn, spent = ours(
            "simulator", f"caller {self.caller.name}", self.compute.timed, answer, audio, text,
        )  # fmt: skip
        measured = spent + turn.compute_s
        last = playing if barge else (self.heard[-1] if self.heard else None)
        if turn.heard and last is not None:
            last.transcript = turn.heard
        self.heard = []
        self.decided = turn
        if barge:
            return
        start = (
            at
            + self.grid.samples(self.gap())
            + self.grid.samples(self.latency.caller_delay(measured, self.rng))
        )
        if clock.kind == "wall":
            start = max(start, self.grid.samples(clock.now()))
        self.decided_at = self.grid.aligned(start)

    def speaks(self, at: int) -> None:
        """The caller starts saying its decided turn at ``at``."""
        turn = self.decided
        assert turn is not None
        self.decided, self.decided_at = None, None
        self.awaiting = False
        self.heard = []
        self.place(turn, at)
        self.hangs_up = turn.end_call

    def turn_over(self) -> None:
        """The caller's turn ended: it waits for the agent (or hangs up)."""
        assert self.turn_end is not None
        self.last_turn_end = self.turn_end
        self.turn_end = None
        self.turn_pieces = []
        self.awaiting = True
        if self.hangs_up:
            raise CallEnded("user_end_call", self.grid.s(self.last_turn_end))

    def yields(self, at: int) -> None:
        """Talked over for ``yield_s``: the caller gives up the rest of its turn at ``at``."""
        self.yield_at = None
        if self.turn_end is None or self.turn_end <= at:
            return
        self.line.cut(at, self.grid.samples(FADE_S))
        kept = [p.end for p in self.turn_pieces if any(p is q for q in self.line.pieces)]
        self.turn_end = max(kept) if kept else at

    def agent_starts(self, spoken: Spoken, at: int) -> None:
        """The agent's utterance (not a backchannel) starts at ``at``: over the caller's turn
        the caller may yield later; otherwise it plans its reactions while listening."""
        if self.turn_end is not None and self.yield_s is not None:
            # the agent talks over the caller's turn
            self.yield_at = at + self.grid.samples(self.yield_s)
        elif self.turn_end is None:
            duration = self.grid.s(spoken.length)
            if spoken.open:  # its length is not known yet: planned for what the agent declared
                duration = max(duration, spoken.turn.expected_s)
            plan = self.listening_plan(spoken.turn.text or "", duration)
            for bc in plan.backchannels:
                spoken.plan.append((at + self.grid.samples(bc.at_s), "backchannel", bc.text))
            if plan.barge_in is not None:
                spoken.plan.append((at + self.grid.samples(plan.barge_in.at_s), "barge", ""))
            spoken.plan.sort()

    def agent_stopped(self, end: int, clock: Clock) -> None:
        """The agent's utterance (not a backchannel) left the line at ``end``: an answer to
        the caller's turn gets its next decision; a turn already decided (the opening, or one
        held while the agent spoke) is said a gap after the agent stops."""
        answered = self.awaiting and end > self.last_turn_end
        if answered and self.decided is None:
            self.decide(end, clock, None)
        elif self.decided is not None:
            after = self.grid.aligned(end + self.grid.samples(self.gap()))
            self.decided_at = max(self.decided_at or 0, after)
