"""One live call in progress: the line's clock and events between the caller's side, the
agent's side and the agent's speech on the line (see ``voxeval.simulation.engine``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import numpy as np

from voxeval.audio import Audio
from voxeval.benchmarks.eva.scenario import Scenario
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject
from voxeval.simulation.bus import BUS_RATE, AudioBus
from voxeval.simulation.call_engine.agent_side import AgentSide
from voxeval.simulation.call_engine.agent_speech import AgentSpeech
from voxeval.simulation.call_engine.caller_side import CallerSide
from voxeval.simulation.call_engine.compute import CallCompute, ours
from voxeval.simulation.call_engine.ended import CallEnded
from voxeval.simulation.call_engine.frames import FrameGrid
from voxeval.simulation.call_engine.segments import speech_segments
from voxeval.simulation.call_engine.settings import EngineSettings
from voxeval.simulation.call_engine.voices import AudioTransform, CallVoices, Renderer
from voxeval.simulation.clock import Clock
from voxeval.simulation.compute_lane import ComputeLane
from voxeval.simulation.latency import LatencyModel, RenderingLatency
from voxeval.simulation.line import CallerLine, LineEffect
from voxeval.simulation.parties import AgentTurn, Caller, CallerTurn
from voxeval.simulation.timeline import SpeakerSegment, Timeline
from voxeval.simulation.turn_detection import FrameVAD, TurnDetector
from voxeval.systems.call import (
    CallAgent,
    LineBlock,
    MoreAudio,
    Reply,
    StopSpeaking,
    StreamingCallAgent,
)
from voxeval.systems.turn_handling import FrameVAD as StreamingVAD
from voxeval.systems.turn_handling import as_streaming

Mode = Literal["audio", "text"]

MAX_BLOCK_FRAMES = 250  # longest stretch handed to the agent at once
LINE_OPEN_S = 0.1  # the caller never speaks in the line's first 100 ms


class LiveCall:
    """One call in progress: the line's clock and events, between the caller's side
    (``CallerSide``), the agent's side (``AgentSide``) and the agent's speech on the line
    (``AgentSpeech``)."""

    def __init__(
        self,
        scenario: Scenario,
        caller: Caller,
        agent: StreamingCallAgent | CallAgent,
        tools: ToolRuntime,
        *,
        mode: Mode,
        latency: LatencyModel,
        max_duration_s: float,
        agent_timeout_s: float,
        seed: int,
        caller_voice: Renderer | None,
        agent_voice: Renderer | None,
        caller_transform: AudioTransform | None,
        line_effects: list[LineEffect],
        vad: FrameVAD | None,
        agent_vad: StreamingVAD | None,
        interruption_asr: Callable[[Audio], str] | None,
        settings: EngineSettings,
        clock: Clock,
        rendering: RenderingLatency,
        lane: ComputeLane | None,
        clock_follows_agent: bool = False,
    ) -> None:
        if mode not in ("audio", "text"):
            raise ConfigError(f"simulation.mode must be 'audio' or 'text', got {mode!r}")
        self.scenario, self.mode, self.clock = scenario, mode, clock
        self.clock_follows_agent = clock_follows_agent
        self.agent_timeout_s = agent_timeout_s
        rng = np.random.default_rng(seed)
        # the caller's drawn response gaps, a stream of their own (other draws do not move)
        gap_rng = np.random.default_rng([abs(seed), 0x6A7])
        detector = TurnDetector(
            settings.eot_silence_s,
            vad=vad,
            words_per_s=settings.words_per_s,
            pause_s=settings.pause_s,
        )
        self.grid = FrameGrid(BUS_RATE, max(1, round(settings.frame_ms / 1000 * BUS_RATE)))
        self.max_samples = round(max_duration_s * BUS_RATE)
        self.max_duration_s = max_duration_s
        self.line = CallerLine(mode, self.grid.frame, BUS_RATE, list(line_effects))
        reports_latency = agent.reports_latency
        # An agent that reports its own latency (remote) or runs on the wall clock waits on
        # the network: its work is timed as it happens, outside the lane.
        agent_laned = lane is not None and not reports_latency
        agent_laned = agent_laned and clock.kind != "wall"
        self.compute = CallCompute(lane, agent_laned)
        self.timeline = Timeline()
        voices = CallVoices(
            mode,
            self.grid,
            self.line,
            detector,
            self.compute,
            words_per_s=settings.words_per_s,
            caller_voice=caller_voice,
            agent_voice=agent_voice,
            caller_transform=caller_transform,
        )
        self.voices = voices
        self.agent = AgentSide(
            as_streaming(agent, settings.turn_policy(), agent_vad, interruption_asr),
            agent.name,
            tools,
            self.grid,
            self.line,
            voices,
            self.compute,
            self.timeline,
            latency=latency,
            rendering=rendering,
            rng=rng,
            reports_latency=reports_latency,
        )
        self.speech = AgentSpeech(self.grid, AudioBus(BUS_RATE) if mode == "audio" else None)
        self.caller = CallerSide(
            caller,
            self.grid,
            self.line,
            voices,
            self.compute,
            latency,
            rng,
            gap_rng,
            gap_s=settings.caller_gap_s,
            yield_s=settings.caller_yield_s,
            pause_s=settings.pause_s,
        )
        self.latency = latency

    # ---------------------------------------------------------------- agent speech
    def _agent_acts(self, produce: Callable[[], AgentTurn | None], at: int) -> None:
        """The agent took the turn at sample ``at``: run its work, schedule its speech."""
        spoken = self.agent.acts(produce, at, self.clock)
        if spoken is not None:
            self.speech.pending = spoken

    def _start_playing(self, at: int) -> None:
        spoken = self.speech.start_playing()
        if spoken.turn.backchannel:
            return  # the caller neither yields to nor reacts to an "mm-hm"
        self.caller.agent_starts(spoken, at)

    def _stop_playing(self, at: int, yielded: bool) -> None:
        spoken = self.speech.stop_playing(at, yielded)
        if not spoken.turn.backchannel:
            self.caller.heard.append(spoken)
        self.caller.yield_at = None
        if spoken.turn.end_call:
            raise CallEnded("agent_end_call", self.grid.s(spoken.end))
        self.agent.agent.utterance_done(spoken.turn.text or "", spoken.fraction())
        if spoken.turn.backchannel:
            return  # not an answer: the caller goes on with its turn
        self.caller.agent_stopped(spoken.end, self.clock)

    def _more_audio(self, more: MoreAudio) -> None:
        """A live agent's open reply goes on or is complete; stopped by the agent, it is cut
        where its audio ended."""
        stopped = self.speech.more_audio(more)
        if stopped is not None:
            self._stop_playing(stopped.onset + stopped.length, yielded=True)

    # ---------------------------------------------------------------- events
    def _deadline(self) -> int | None:
        """When the agent's silence after the caller's turn becomes a timeout."""
        caller = self.caller
        if not caller.awaiting or self.speech.playing is not None or caller.decided is not None:
            return None
        silent_since = max(caller.last_turn_end, self.speech.last_end)
        return silent_since + self.grid.samples(self.agent_timeout_s)

    def _events(self, now: int) -> None:
        """Everything due at sample ``now`` (a frame boundary), in a fixed order."""
        caller, speech = self.caller, self.speech
        if now >= self.max_samples:
            raise CallEnded("max_duration", self.max_duration_s)
        deadline = self._deadline()
        late = speech.pending is None or speech.pending.onset > (deadline or 0)
        if deadline is not None and deadline <= now and late:
            raise self.agent.silent(deadline, self.agent_timeout_s)
        live = speech.playing
        if live is not None and not live.open and live.onset + live.length <= now:
            self._stop_playing(live.onset + live.length, yielded=False)
        if speech.playing is not None and caller.yield_at is not None and caller.yield_at <= now:
            caller.yields(now)
        if caller.turn_end is not None and caller.turn_end <= now:
            caller.turn_over()
        if speech.pending is not None and speech.pending.onset <= now and speech.playing is None:
            self._start_playing(now)
        playing = speech.playing
        while playing is not None and playing.plan and playing.plan[0][0] <= now:
            _, kind, text = playing.plan.pop(0)
            if kind == "backchannel" and caller.turn_end is None and caller.decided is None:
                caller.place(CallerTurn(text), now, backchannel=True)
            elif kind == "barge" and caller.turn_end is None:
                if caller.decided is None:
                    caller.decide(now, self.clock, playing, barge=True)
                caller.speaks(now)  # cuts in: talks over the agent
                playing.plan.clear()
        if caller.decided_at is not None and caller.decided_at <= now:
            if speech.playing is None:
                caller.speaks(now)
            else:  # the agent is talking: the caller holds its turn until it stops
                caller.decided_at = None

    def _next_event(self, now: int) -> int:
        """The next sample after ``now`` at which something is due."""
        caller, speech = self.caller, self.speech
        due = [self.max_samples]
        if speech.pending is not None:
            due.append(speech.pending.onset)
        if speech.playing is not None:
            due.append(speech.playing.onset + speech.playing.length)
            due += [t for t, _, _ in speech.playing.plan]
        for t in (caller.yield_at, caller.turn_end, caller.decided_at, self._deadline()):
            if t is not None:
                due.append(t)
        due += self.line.boundaries_after(now)
        later = [t for t in due if t > now]
        return min(later) if later else now + self.grid.frame

    # ---------------------------------------------------------------- main loop
    def _open(self) -> None:
        """The agent's greeting (if any) and the caller's opening turn."""
        agent = self.agent
        self._agent_acts(lambda: agent.agent.start(self.scenario, agent.tools), 0)  # type: ignore[arg-type]
        if self.clock_follows_agent:
            self.clock = agent.settled_clock(self.clock)
        caller = self.caller
        opening, spent = ours(
            "simulator", f"caller {caller.caller.name}", self.compute.timed,
            caller.caller.start, self.scenario,
        )  # fmt: skip
        measured = spent + opening.compute_s
        caller.decided = opening
        caller.awaiting = True
        if self.speech.pending is None:  # no greeting: the caller opens
            start = self.grid.samples(self.latency.caller_delay(measured, caller.rng))
            caller.decided_at = self.grid.aligned(max(start, self.grid.samples(LINE_OPEN_S)))
        if self.mode == "audio" and self.line.effects:
            self.voices.calibrate(opening, caller.speaking_plan)

    def run(self) -> CallEnded:
        """Play the call to its end; how it ended. Faults on our side (caller, renderers)
        raise ``HarnessFault``: there is no call to score, the runner retries it."""
        grid = self.grid
        try:
            self._open()
            k = stalled = 0
            while True:
                now = k * grid.frame
                self._events(now)
                nxt = grid.frame_ceil(self._next_event(now))
                frames = max(1, min(nxt - k, MAX_BLOCK_FRAMES))
                samples, speech, words = self.line.block(k, frames)
                block = LineBlock(
                    k,
                    frames,
                    grid.frame,
                    grid.rate,
                    samples,
                    speech,
                    words,
                    playing=self.speech.playing is not None,
                )
                action = self.agent.hear(block, now)
                used = frames if action is None else max(0, action.frame - k + 1)
                stalled = stalled + 1 if used == 0 else 0
                if stalled > 3:  # acts again and again without taking in the line
                    raise CallEnded("agent_error", grid.s(now), fault=self.agent.stuck())
                self.line.record(k, used, samples)
                k += used
                if isinstance(action, StopSpeaking):
                    pending = self.speech.pending
                    if self.speech.playing is not None:
                        self._stop_playing(k * grid.frame, yielded=True)
                    elif pending is not None and pending.open:
                        pending.open = False  # stopped before it began: nothing more comes
                elif isinstance(action, Reply):
                    self._agent_acts(action.produce, k * grid.frame)
                elif isinstance(action, MoreAudio):
                    self._more_audio(action)
        except CallEnded as end:
            return end

    # ---------------------------------------------------------------- result
    def segments(self, t_end: float | None = None) -> list[SpeakerSegment]:
        """The call's speech segments; ``t_end``: when the call ended (speech still running
        then is marked cut by the call's end)."""
        return speech_segments(self.speech.on_line(), self.line.pieces, self.grid, t_end)

    def latency_details(self) -> JSONObject:
        return self.agent.latency_details(self.clock)
