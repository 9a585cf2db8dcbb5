"""The agent's side of a call: running its work when it takes the turn (timed, with its tool
calls placed on the timeline), handing it the line, filing what it heard of the caller, and
how its latencies were obtained."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from voxeval.benchmarks.tools import ToolRuntime
from voxeval.benchmarks.tools.tool_call import ToolCallRecord
from voxeval.errors import SystemFault, classify_system_fault
from voxeval.json_types import JSONObject, JSONValue
from voxeval.simulation.call_engine.agent_speech import Spoken
from voxeval.simulation.call_engine.compute import CallCompute
from voxeval.simulation.call_engine.ended import NOT_AGENT_FAULTS, CallEnded
from voxeval.simulation.call_engine.frames import FrameGrid
from voxeval.simulation.call_engine.voices import CallVoices
from voxeval.simulation.clock import Clock, make_clock
from voxeval.simulation.latency import LatencyModel, RenderingLatency
from voxeval.simulation.line import CallerLine
from voxeval.simulation.parties import AgentTurn
from voxeval.simulation.timeline import Timeline, ToolEvent
from voxeval.systems.call import AgentAction, HeardSpeech, LineBlock, StreamingCallAgent
from voxeval.systems.turn_handling import TurnTakingAdapter


class TimedTools:
    """The scenario's tools with the moment of each call noted (observed tool-call times)."""

    def __init__(self, tools: ToolRuntime) -> None:
        self._tools = tools
        self.stamps: dict[int, float] = {}

    def call(self, name: str, arguments: Mapping[str, JSONValue] | str | None) -> ToolCallRecord:
        stamp = time.perf_counter()
        record = self._tools.call(name, arguments)
        self.stamps[id(record)] = stamp
        return record

    # A transparent proxy: every other attribute is the runtime's own, of whatever type it has.
    def __getattr__(self, name: str) -> Any:
        return getattr(self._tools, name)


@dataclass(frozen=True)
class LatencyShare:
    """One agent reply's latency: the agent's own delay and the declared rendering time."""

    turn: int
    agent_s: float
    rendering_s: float
    rendered_by_voxeval: bool

    def record(self) -> JSONObject:
        return {
            "turn": self.turn,
            "agent_s": self.agent_s,
            "rendering_s": self.rendering_s,
            "rendered_by_voxeval": self.rendered_by_voxeval,
        }


class AgentSide:
    """The agent (the system under test) as the call sees it. ``reports_latency``: it
    measures its own latency (remote); ``timeline``: where its tool calls are recorded."""

    def __init__(
        self,
        agent: StreamingCallAgent,
        name: str,
        tools: ToolRuntime,
        grid: FrameGrid,
        line: CallerLine,
        voices: CallVoices,
        compute: CallCompute,
        timeline: Timeline,
        *,
        latency: LatencyModel,
        rendering: RenderingLatency,
        rng: np.random.Generator,
        reports_latency: bool,
    ) -> None:
        self.agent, self.name, self.tools = agent, name, TimedTools(tools)
        self.grid, self.line, self.voices, self.compute = grid, line, voices, compute
        self.timeline = timeline
        self.latency, self.rendering, self.rng = latency, rendering, rng
        self.reports_latency = reports_latency
        self.latency_turns: list[LatencyShare] = []
        self.turns = 0  # the agent's turns so far (a backchannel is not one)

    def _failed(self, exc: Exception, at: int) -> CallEnded:
        """The agent raised at sample ``at``: the call ends, scored as a failure."""
        fault = classify_system_fault(exc, f"agent {self.name}")
        reason = "agent_timeout" if fault.cause == "timeout" else "agent_error"
        return CallEnded(reason, self.grid.s(at), fault=fault)

    def acts(self, produce: Callable[[], AgentTurn | None], at: int, clock: Clock) -> Spoken | None:
        """The agent took the turn at sample ``at``: run its work; its speech, scheduled
        (None: it said nothing)."""
        clock.wait_until(self.grid.s(at))
        self.tools.stamps.clear()
        began: list[float] = []

        def work() -> AgentTurn | None:
            began.append(time.perf_counter())  # in the lane: tool times count from here
            return produce()

        try:
            turn, measured = self.compute.timed(work, agent=True)
        except NOT_AGENT_FAULTS:
            raise
        except Exception as exc:  # the agent failed: the call ends, scored as a failure
            raise self._failed(exc, at) from exc
        t0 = began[0]
        if turn is None:
            self.agent.utterance_done("", 0.0)
            return None
        if turn.heard:
            self.user_transcript(turn.heard)
        try:
            utt, rendered = self.voices.agent_utterance(turn)
        except NOT_AGENT_FAULTS:
            raise  # e.g. our renderer failed on the agent's text
        except Exception as exc:  # the agent's own audio cannot be played
            fault = SystemFault(
                f"agent {self.name}: unusable audio: {type(exc).__name__}: {exc}",
                cause="malformed_output",
            )
            raise CallEnded("agent_error", self.grid.s(at), fault=fault) from exc
        own = turn.compute_s if self.reports_latency else measured + turn.compute_s
        delay = self.latency.agent_delay(own, len(turn.tool_calls), self.rng)
        # A modelled agent latency stands for its whole response; a measured one gets the
        # declared rendering model for text we speak on its behalf.
        rendering = 0.0
        if rendered and self.latency.agent_measured:
            rendering = self.rendering.seconds(turn.text or "")
        if clock.kind == "wall" and not self.reports_latency:
            delay = max(delay, clock.now() - self.grid.s(at) - rendering)
        self.tool_events(turn, at, t0, delay)
        onset = self.grid.aligned(at + self.grid.samples(delay + rendering))
        if utt is not None:
            self.latency_turns.append(
                LatencyShare(self.turns, round(delay, 6), round(rendering, 6), rendered)
            )
        if utt is None:
            self.agent.utterance_done(turn.text or "", 0.0)
            if turn.end_call:  # hung up without a word
                raise CallEnded("agent_end_call", self.grid.s(onset))
            return None
        length = self.grid.samples(utt.duration)
        spoken = Spoken(turn, self.turns, utt, onset, length, open=turn.open)
        if not turn.backchannel:  # an acknowledgement is not a turn
            self.turns += 1
        return spoken

    def tool_events(self, turn: AgentTurn, at: int, t0: float, delay: float) -> None:
        """Tool calls at their observed times (measured agents calling our tools), else spread
        over the agent's modelled working time."""
        n = len(turn.tool_calls)
        observed = self.latency.agent.kind == "measured"
        reported = turn.tool_offsets_s if turn.tool_offsets_s is not None else ()
        for k, record in enumerate(turn.tool_calls):
            stamp = self.tools.stamps.get(id(record))
            if len(reported) == n:  # the agent's own account of when it called
                t = self.grid.s(at) + reported[k]
            elif observed and stamp is not None:
                t = self.grid.s(at) + (stamp - t0)
            else:
                t = self.grid.s(at) + delay * (k + 1) / (n + 1)
            self.timeline.tools.append(
                ToolEvent(
                    t=t,
                    turn=self.turns,
                    name=record.name,
                    arguments=dict(record.arguments),
                    result=record.result,
                    kind=record.kind,
                    valid=record.valid,
                    error=record.error,
                    argument_mismatches=list(record.argument_mismatches),
                )
            )

    def hear(self, block: LineBlock, now: int) -> AgentAction | None:
        """Hand the agent the line's ``block`` (starting at sample ``now``); its action."""
        try:
            action, _ = self.compute.timed(self.agent.hear, block, agent=True)
        except NOT_AGENT_FAULTS:
            raise
        except Exception as exc:  # the agent failed while listening (e.g. it left)
            raise self._failed(exc, now) from exc
        self.heard_speech(self.agent.take_transcripts())
        return action

    def heard_speech(self, heard: list[HeardSpeech]) -> None:
        """A streaming agent's transcripts, each filed under the caller turn it overlaps most
        (else the last turn that started before it ended)."""
        firsts = {p.turn: p for p in self.line.pieces if p.first_of_turn and not p.backchannel}
        for item in heard:
            start, end = self.grid.samples(item.start_s), self.grid.samples(item.end_s)
            overlap: dict[int, int] = {}
            for p in self.line.pieces:
                if not p.backchannel and p.turn in firsts:
                    shared = min(end, p.end) - max(start, p.start)
                    overlap[p.turn] = overlap.get(p.turn, 0) + max(0, shared)
            best = max(overlap, key=lambda t: (overlap[t], t)) if overlap else None
            if best is None or overlap[best] == 0:
                before = [t for t, p in firsts.items() if p.start <= end]
                best = max(before) if before else None
            if best is not None and item.text.strip():
                piece = firsts[best]
                piece.transcript = f"{piece.transcript} {item.text.strip()}".strip()

    def user_transcript(self, heard: str) -> None:
        """What the agent heard of the caller's latest turn (its ASR), for STT metrics."""
        firsts = [p for p in self.line.pieces if p.first_of_turn and not p.backchannel]
        if firsts:
            piece = firsts[-1]
            piece.transcript = f"{piece.transcript} {heard}".strip()

    def settled_clock(self, clock: Clock) -> Clock:
        """An agent may settle its clock while starting (a Pipecat pipeline knows whether its
        services are local once built): the clock it asks for."""
        settled = self.agent.clock
        return make_clock(settled) if settled != clock.kind else clock

    def stuck(self) -> SystemFault:
        return SystemFault(
            f"agent {self.name}: returned actions without taking in the line",
            cause="malformed_output",
        )

    def silent(self, deadline: int, timeout_s: float) -> CallEnded:
        """The agent said nothing within ``timeout_s`` of the caller's turn end."""
        fault = SystemFault(
            f"agent {self.name}: no answer within {timeout_s:g} s",
            cause="timeout",
        )
        return CallEnded("agent_timeout", self.grid.s(deadline), fault=fault)

    def latency_details(self, clock: Clock) -> JSONObject:
        """How the agent's latencies were obtained, with each reply's share (``call.json``)."""
        measured = self.latency.agent_measured
        rendered = [t for t in self.latency_turns if t.rendered_by_voxeval]
        rendering: JSONObject | None = None
        if rendered and measured:
            rendering = {
                "model": self.rendering.model_dump(),
                "turns": len(rendered),
                "seconds": round(sum(t.rendering_s for t in rendered), 6),
            }
        return {
            # wall: real time, the agent's latencies as they happened; virtual: computed
            "clock": clock.kind,
            "agent": "measured" if measured else "modelled",
            # who measured: we did (in the compute lane or not), or the agent reported it
            "measured_by": "agent" if self.reports_latency else "voxeval",
            "compute_lane": self.compute.agent_laned,
            # False: the agent ran on the virtual clock with its compute left out of call time
            # (a Pipecat pipeline stepped on virtual time), so latencies exclude inference
            "agent_compute_in_latency": not (
                clock.kind == "virtual" and not self.agent.compute_takes_call_time_on_virtual_clock
            ),
            "tool": "modelled" if self.latency.tool is not None else None,
            "rendering_by_voxeval": rendering,
            "turns": [t.record() for t in self.latency_turns],
        }

    def turn_handling(self) -> JSONObject:
        """Whose settings decided the agent's turn timing: voxeval's turn adapter (with its
        policy and VAD) for a turn-based agent, the agent itself for a streaming one."""
        if isinstance(self.agent, TurnTakingAdapter):
            return self.agent.describe()
        return {"adapter": False}
