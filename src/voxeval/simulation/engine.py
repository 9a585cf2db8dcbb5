"""The call engine: a full-duplex phone line between a simulated caller and an agent.

Frames. The line moves in frames of ``frame_ms`` (default 20 ms) on the call's clock, in both
directions: the agent receives the caller's line (speech, backchannels, the continuous
acoustic environment) frame by frame whether or not it is talking itself, and its own replies
go out from a frame boundary. An agent either listens to the line itself
(``StreamingCallAgent``) or answers whole turns and gets turn handling from
``voxeval.systems.turn_handling`` (streaming VAD, end-of-turn silence and patience, barge-in
threshold, history of what the caller heard). Nothing about yielding or barging in is a
constant of the engine: it records what each party did.

Time. A ``VirtualClock`` jumps: a stretch where the line is empty (no speech, no noise) is one
block for the agent, and nothing in between costs time. A ``WallClock`` waits for each
decision point, so external real-time agents meet a real-time caller. An agent's reply starts
at the first frame after its decision plus its latency: its measured compute (or a configured
latency model), plus, for a text-only agent whose text we speak, the declared
``RenderingLatency`` (never our synthesiser's wall time). In-process compute (the agent's work,
its listening, our renderers and callers) runs in a ``ComputeLane`` and is timed only while it
holds the lane, so calls running in parallel do not inflate each other's latency.

The caller follows its behaviour (``voxeval.simulation.caller_behaviour``): a turn is said as
its ``SpeakingPlan`` (pieces with silences between them, one caller turn); while an agent
utterance plays, its ``ListeningPlan`` adds backchannels and a barge-in, which starts the
caller's next turn having heard only what came before. Otherwise the caller answers
``caller_gap_s`` after an agent utterance ends that reached past the end of its turn (None:
a gap drawn from its persona, ``personas.response_gap``). If the
agent starts talking over the caller's turn and is still talking ``caller_yield_s`` later, the
caller gives up the rest of its turn (tau2-bench's full-duplex user yields when talked over
for 1 s; None: the caller never yields).

Endings: ``user_end_call``, ``agent_end_call``, ``agent_timeout`` (the agent said nothing for
``agent_timeout_s`` after the caller's turn ended; a pause inside a turn never counts),
``agent_error`` and ``max_duration``.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeVar

import numpy as np

from voxeval.audio import Audio, rms
from voxeval.audio.mix import mix_tracks
from voxeval.benchmarks.eva.scenario import Scenario
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.errors import (
    ConfigError,
    HarnessFault,
    ProviderUnavailable,
    SystemFault,
    classify_system_fault,
)
from voxeval.simulation.bus import BUS_RATE, FADE_S, AudioBus, to_rate
from voxeval.simulation.call_end import timeline_until_end
from voxeval.simulation.caller_behaviour import (
    CallerBehaviour,
    ListeningPlan,
    ScheduledBehaviour,
    SpeakingPlan,
)
from voxeval.simulation.clock import Clock, make_clock
from voxeval.simulation.compute_lane import SHARED_LANE, ComputeLane, unlaned
from voxeval.simulation.latency import LatencyModel, RenderingLatency
from voxeval.simulation.line import CallerLine, LineEffect, LinePiece
from voxeval.simulation.parties import AgentTurn, Caller, CallerTurn
from voxeval.simulation.personas import Persona, get_persona, response_gap
from voxeval.simulation.timeline import EndEvent, SpeakerSegment, Timeline, ToolEvent
from voxeval.simulation.turn_detection import (
    Chunk,
    FrameVAD,
    TurnDetector,
    Utterance,
    words_spoken,
)
from voxeval.systems.call import (
    HeardSpeech,
    LineBlock,
    MoreAudio,
    Reply,
    StopSpeaking,
    StreamingCallAgent,
)
from voxeval.systems.turn_handling import FrameVAD as StreamingVAD
from voxeval.systems.turn_handling import TurnPolicy, TurnTakingAdapter, as_streaming

Renderer = Callable[[str], Audio]
AudioTransform = Callable[[Audio], Audio]
Mode = Literal["audio", "text"]

MAX_BLOCK_FRAMES = 250  # longest stretch handed to the agent at once
LINE_OPEN_S = 0.1  # the caller never speaks in the line's first 100 ms
# An agent's early stop is put down to the caller speech on the line in this many seconds
# before it (an adapted agent stops within its interruption policy's duration and word checks).
CUT_CAUSE_S = 2.0


@dataclass(frozen=True)
class EngineSettings:
    """Timing of the line and the defaults of adapted agents' turn handling (seconds)."""

    eot_silence_s: float = 0.7  # adapted agents: silence that ends the caller's turn
    patience_s: float = 0.0  # adapted agents: extra listening before taking the turn
    barge_in_s: float | None = 0.3  # adapted agents: caller speech that stops their reply
    min_interruption_words: int = 0  # adapted agents: non-backchannel words it must hold too
    # caller's pause after the agent stops before answering; None: drawn from its persona
    caller_gap_s: float | None = 0.6
    caller_yield_s: float | None = 1.0  # caller stops after being talked over this long
    frame_ms: float = 20.0
    words_per_s: float = 2.5  # text-only speaking rate
    pause_s: float = 1.0  # pause inside a caller turn (default behaviour, text markers)

    def __post_init__(self) -> None:
        if not 10.0 <= self.frame_ms <= 100.0:
            raise ConfigError(f"simulation.frame_ms must be within 10-100, got {self.frame_ms}")

    def turn_policy(self) -> TurnPolicy:
        return TurnPolicy(
            eot_silence_ms=self.eot_silence_s * 1000,
            patience_ms=self.patience_s * 1000,
            barge_in_ms=None if self.barge_in_s is None else self.barge_in_s * 1000,
            min_interruption_words=self.min_interruption_words,
        )


@dataclass
class CallResult:
    timeline: Timeline
    user_track: Audio | None
    assistant_track: Audio | None
    mixed: Audio | None
    initial_db: dict[str, Any]
    final_db: dict[str, Any]
    session: dict[str, Any]
    end_reason: str
    error: str | None = None
    duration_s: float = 0.0
    wall_s: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)
    # The agent (the system under test) failed: it raised, disconnected, answered with
    # unusable output or stayed silent past its timeout. The call is scored as a failure.
    system_fault: SystemFault | None = None


class _CallEnded(Exception):
    def __init__(
        self, reason: str, t: float, error: str | None = None, fault: SystemFault | None = None
    ) -> None:
        super().__init__(reason)
        self.reason, self.t, self.error, self.fault = reason, t, error, fault
        if fault is not None and error is None:
            self.error = str(fault)


# Raised by the agent yet not its fault: our side, or a setup problem (missing key or model).
_NOT_AGENT_FAULTS = (HarnessFault, ConfigError, ProviderUnavailable)


@dataclass(eq=False)
class _Spoken:
    """One agent utterance on the line (sample times)."""

    turn: AgentTurn
    index: int
    utterance: Utterance
    onset: int
    length: int
    stop: int | None = None  # the agent stopped here (it yielded)
    open: bool = False  # a live agent's reply whose audio is still arriving (``MoreAudio``)
    transcript: str = ""
    plan: list[tuple[int, str, str]] = field(default_factory=list)  # caller's reactions

    @property
    def end(self) -> int:
        return self.onset + self.length if self.stop is None else self.stop

    def fraction(self) -> float:
        return 1.0 if self.length <= 0 else min(1.0, (self.end - self.onset) / self.length)

    def heard_text(self) -> str:
        text = self.turn.text or ""
        return text if self.stop is None else words_spoken(text, self.fraction())


class _TimedTools:
    """The scenario's tools with the moment of each call noted (observed tool-call times)."""

    def __init__(self, tools: Any) -> None:
        self._tools = tools
        self.stamps: dict[int, float] = {}

    def call(self, *args: Any, **kwargs: Any) -> Any:
        stamp = time.perf_counter()
        record = self._tools.call(*args, **kwargs)
        self.stamps[id(record)] = stamp
        return record

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tools, name)


class _Call:
    def __init__(
        self,
        scenario: Scenario,
        caller: Caller,
        agent: Any,
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
        self.scenario, self.caller, self.tools = scenario, caller, _TimedTools(tools)
        self.agent_name = str(getattr(agent, "name", "agent"))
        self.agent: StreamingCallAgent = as_streaming(
            agent, settings.turn_policy(), agent_vad, interruption_asr
        )
        self.mode, self.latency, self.settings, self.clock = mode, latency, settings, clock
        self.clock_follows_agent = clock_follows_agent
        self.agent_timeout_s = agent_timeout_s
        self.rng = np.random.default_rng(seed)
        # the caller's drawn response gaps, a stream of their own (other draws do not move)
        self.gap_rng = np.random.default_rng([abs(seed), 0x6A7])
        self.caller_voice, self.agent_voice = caller_voice, agent_voice
        self.caller_transform = caller_transform
        self.detector = TurnDetector(
            settings.eot_silence_s,
            vad=vad,
            words_per_s=settings.words_per_s,
            pause_s=settings.pause_s,
        )
        self.rate = BUS_RATE
        self.frame = max(1, round(settings.frame_ms / 1000 * self.rate))
        self.max_samples = round(max_duration_s * self.rate)
        self.max_duration_s = max_duration_s
        self.line = CallerLine(mode, self.frame, self.rate, list(line_effects))
        self.agent_bus = AudioBus(BUS_RATE) if mode == "audio" else None
        self.agent_reports_latency = bool(getattr(agent, "reports_latency", False))
        self.rendering, self.lane = rendering, lane
        # An agent that reports its own latency (remote) or runs on the wall clock waits on
        # the network: its work is timed as it happens, outside the lane.
        self.agent_laned = lane is not None and not self.agent_reports_latency
        self.agent_laned = self.agent_laned and clock.kind != "wall"
        self.compute_s = 0.0  # every timed component section, summed (engine overhead bench)
        self.latency_turns: list[dict[str, Any]] = []
        self._fallback_behaviour = ScheduledBehaviour(pause_s=settings.pause_s)
        self.timeline = Timeline()
        self.spoken: list[_Spoken] = []
        self.pending: _Spoken | None = None
        self.playing: _Spoken | None = None
        self.agent_turns = 0
        self.user_turns = 0
        # caller state
        self.decided: CallerTurn | None = None  # its next turn, decided, not yet said
        self.decided_at: int | None = None  # when it starts saying it
        self.turn_end: int | None = None  # end of the turn it is saying (None: not speaking)
        self.turn_pieces: list[LinePiece] = []
        self.awaiting = False  # finished a turn, waits for the agent
        self.last_turn_end = 0
        self.hangs_up = False
        self.heard: list[_Spoken] = []  # agent speech since its last decision
        self.yield_at: int | None = None
        self.last_agent_end = 0

    @property
    def behaviour(self) -> CallerBehaviour:
        """The caller's own behaviour, read each time (a caller rebuilds it at ``start()``,
        e.g. for the scenario's language); a caller without one pauses only where its text
        marks a pause and never barges in or backchannels."""
        own = getattr(self.caller, "behaviour", None)
        return own if own is not None else self._fallback_behaviour

    def _speaking_plan(self, text: str) -> SpeakingPlan:
        plan: SpeakingPlan = _ours(
            "simulator", "caller speaking plan", self._laned, self.behaviour.speaking_plan, text
        )
        return plan

    def _listening_plan(self, text: str, duration_s: float) -> ListeningPlan:
        plan: ListeningPlan = _ours(
            "simulator",
            "caller listening plan",
            self._laned,
            self.behaviour.listening_plan,
            text,
            duration_s,
        )
        return plan

    def _timed(self, fn: Callable[..., T], *args: Any, agent: bool = False) -> tuple[T, float]:
        """``fn(*args)`` and its compute seconds (in the lane unless an unlaned agent)."""
        laned = self.agent_laned if agent else self.lane is not None
        if laned and self.lane is not None:
            result, spent = self.lane.run(fn, *args)
        else:
            result, spent = unlaned(fn, *args)
        self.compute_s += spent
        return result, spent

    def _laned(self, fn: Callable[..., T], *args: Any) -> T:
        return self._timed(fn, *args)[0]

    # ---------------------------------------------------------------- time helpers
    def _s(self, sample: int) -> float:
        return sample / self.rate

    def _samples(self, seconds: float) -> int:
        return round(seconds * self.rate)

    def _frame_ceil(self, sample: int) -> int:
        return -(-sample // self.frame)

    def _aligned(self, sample: int) -> int:
        """The first frame boundary at or after ``sample`` (speech goes out in frames)."""
        return self._frame_ceil(sample) * self.frame

    # ---------------------------------------------------------------- rendering
    def _caller_pieces(self, turn: CallerTurn, start: int, backchannel: bool = False) -> None:
        """Place the caller's ``turn`` on the line from ``start`` (its speaking plan)."""
        if turn.audio is not None and self.mode == "audio":
            parts: list[tuple[str, float]] = [(turn.text, 0.0)]
        else:
            plan = self._speaking_plan(turn.text)
            pauses = (*plan.pauses_s, 0.0)
            parts = list(zip(plan.pieces, pauses, strict=True))
        t = start
        index = self.user_turns if not backchannel else max(0, self.user_turns - 1)
        placed: list[LinePiece] = []
        rate_factor = float(getattr(self.caller, "speech_rate", 1.0))
        for n, (text, pause) in enumerate(parts):
            if self.mode == "text":
                words = max(1, len(text.split()))
                length = self._samples(words / (self.settings.words_per_s * rate_factor))
                piece = LinePiece(t, length, text, index, None, backchannel, n == 0)
            else:
                rendered = self._caller_audio(turn if len(parts) == 1 else None, text)
                if rendered is None:
                    continue
                samples, length = rendered
                piece = LinePiece(t, length, text, index, samples, backchannel, n == 0)
            placed.append(piece)
            t = piece.start + piece.length + self._samples(pause)
        if not placed:
            raise HarnessFault(
                f"the caller's turn contains no speech: {turn.text!r}",
                component="renderer" if self.mode == "audio" else "simulator",
            )
        for piece in placed:
            self.line.add(piece)
        if not backchannel:
            self.turn_pieces = placed
            self.turn_end = placed[-1].end
            self.user_turns += 1

    def _caller_audio(self, turn: CallerTurn | None, text: str) -> tuple[np.ndarray, int] | None:
        """The caller's utterance as the line carries it, and how long its speech lasts: a
        perturbation may leave a tail after the speech (a room's ring-out), which plays on."""
        audio = turn.audio if turn is not None else None
        if audio is None:
            if self.caller_voice is None:
                raise ConfigError("audio mode needs a caller voice (simulation.caller_voice)")
            audio = _ours("renderer", "caller voice", self._laned, self.caller_voice, text)
        clean = self._laned(self.detector.from_audio, to_rate(audio), text)
        if clean.audio is None or clean.duration <= 0:
            return None
        heard = clean.audio
        if self.caller_transform is not None:
            perturbed = _ours(
                "perturbation", "caller transform", self._laned, self.caller_transform, heard
            )
            heard = to_rate(perturbed)
        samples = heard.samples.astype(np.float32)
        for effect in self.line.effects:
            effect.calibrate(rms(clean.audio))
        return samples, min(samples.size, clean.audio.num_samples)

    def _agent_utterance(self, turn: AgentTurn) -> tuple[Utterance | None, bool]:
        """The agent's speech, and whether we rendered it from the agent's text (a text-only
        agent: its latency then includes the declared rendering model, not our time)."""
        text = (turn.text or "").strip()
        if self.mode == "text":
            return (self.detector.from_text(text) if text else None), False
        if turn.audio is not None and turn.open:  # placed as it arrives, more to come
            return _open_utterance(to_rate(turn.audio), text), False
        if turn.audio is not None:
            utt = self._laned(self.detector.from_audio, to_rate(turn.audio), text)
            return (utt if utt.chunks else None), False
        if not text:
            return None, False
        if self.agent_voice is None:
            raise ConfigError("audio mode needs an agent voice (simulation.agent_voice)")
        audio = _ours("renderer", "agent voice", self._laned, self.agent_voice, text)
        utt = self._laned(self.detector.from_audio, to_rate(audio), text)
        return (utt if utt.chunks else None), True

    # ---------------------------------------------------------------- agent side
    def _agent_acts(self, produce: Callable[[], AgentTurn | None], at: int) -> None:
        """The agent took the turn at sample ``at``: run its work, schedule its speech."""
        self.clock.wait_until(self._s(at))
        self.tools.stamps.clear()
        began: list[float] = []

        def work() -> AgentTurn | None:
            began.append(time.perf_counter())  # in the lane: tool times count from here
            return produce()

        try:
            turn, measured = self._timed(work, agent=True)
        except _NOT_AGENT_FAULTS:
            raise
        except Exception as exc:  # the agent failed: the call ends, scored as a failure
            fault = classify_system_fault(exc, f"agent {self.agent_name}")
            reason = "agent_timeout" if fault.cause == "timeout" else "agent_error"
            raise _CallEnded(reason, self._s(at), fault=fault) from exc
        t0 = began[0]
        if turn is None:
            self.agent.utterance_done("", 0.0)
            return
        if turn.heard:
            self._user_transcript(turn.heard)
        try:
            utt, rendered = self._agent_utterance(turn)
        except _NOT_AGENT_FAULTS:
            raise  # e.g. our renderer failed on the agent's text
        except Exception as exc:  # the agent's own audio cannot be played
            fault = SystemFault(
                f"agent {self.agent_name}: unusable audio: {type(exc).__name__}: {exc}",
                cause="malformed_output",
            )
            raise _CallEnded("agent_error", self._s(at), fault=fault) from exc
        own = turn.compute_s if self.agent_reports_latency else measured + turn.compute_s
        delay = self.latency.agent_delay(own, len(turn.tool_calls), self.rng)
        # A modelled agent latency stands for its whole response; a measured one gets the
        # declared rendering model for text we speak on its behalf.
        rendering = 0.0
        if rendered and self.latency.agent_measured:
            rendering = self.rendering.seconds(turn.text or "")
        if self.clock.kind == "wall" and not self.agent_reports_latency:
            delay = max(delay, self.clock.now() - self._s(at) - rendering)
        self._tool_events(turn, at, t0, delay)
        onset = self._aligned(at + self._samples(delay + rendering))
        if utt is not None:
            self.latency_turns.append(
                {
                    "turn": self.agent_turns,
                    "agent_s": round(delay, 6),
                    "rendering_s": round(rendering, 6),
                    "rendered_by_voxeval": rendered,
                }
            )
        if utt is None:
            self.agent.utterance_done(turn.text or "", 0.0)
            if turn.end_call:  # hung up without a word
                raise _CallEnded("agent_end_call", self._s(onset))
            return
        length = self._samples(utt.duration)
        self.pending = _Spoken(turn, self.agent_turns, utt, onset, length, open=turn.open)
        if not turn.backchannel:  # an acknowledgement is not a turn
            self.agent_turns += 1

    def _tool_events(self, turn: AgentTurn, at: int, t0: float, delay: float) -> None:
        """Tool calls at their observed times (measured agents calling our tools), else spread
        over the agent's modelled working time."""
        n = len(turn.tool_calls)
        observed = self.latency.agent.kind == "measured"
        reported = turn.tool_offsets_s if turn.tool_offsets_s is not None else ()
        for k, record in enumerate(turn.tool_calls):
            stamp = self.tools.stamps.get(id(record))
            if len(reported) == n:  # the agent's own account of when it called
                t = self._s(at) + reported[k]
            elif observed and stamp is not None:
                t = self._s(at) + (stamp - t0)
            else:
                t = self._s(at) + delay * (k + 1) / (n + 1)
            self.timeline.tools.append(
                ToolEvent(
                    t=t,
                    turn=self.agent_turns,
                    name=record.name,
                    arguments=dict(record.arguments),
                    result=record.result,
                    kind=record.kind,
                    valid=record.valid,
                    error=record.error,
                    argument_mismatches=list(record.argument_mismatches),
                )
            )

    def _heard_speech(self, heard: list[HeardSpeech]) -> None:
        """A streaming agent's transcripts, each filed under the caller turn it overlaps most
        (else the last turn that started before it ended)."""
        firsts = {p.turn: p for p in self.line.pieces if p.first_of_turn and not p.backchannel}
        for item in heard:
            start, end = self._samples(item.start_s), self._samples(item.end_s)
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

    def _user_transcript(self, heard: str) -> None:
        """What the agent heard of the caller's latest turn (its ASR), for STT metrics."""
        firsts = [p for p in self.line.pieces if p.first_of_turn and not p.backchannel]
        if firsts:
            piece = firsts[-1]
            piece.transcript = f"{piece.transcript} {heard}".strip()

    def _start_playing(self, at: int) -> None:
        spoken = self.pending
        assert spoken is not None
        self.pending, self.playing = None, spoken
        if spoken.turn.backchannel:
            return  # the caller neither yields to nor reacts to an "mm-hm"
        if self.turn_end is not None and self.settings.caller_yield_s is not None:
            # the agent talks over the caller's turn
            self.yield_at = at + self._samples(self.settings.caller_yield_s)
        elif self.turn_end is None:
            duration = self._s(spoken.length)
            if spoken.open:  # its length is not known yet: planned for what the agent declared
                duration = max(duration, spoken.turn.expected_s)
            plan = self._listening_plan(spoken.turn.text or "", duration)
            for bc in plan.backchannels:
                spoken.plan.append((at + self._samples(bc.at_s), "backchannel", bc.text))
            if plan.barge_in is not None:
                spoken.plan.append((at + self._samples(plan.barge_in.at_s), "barge", ""))
            spoken.plan.sort()

    def _stop_playing(self, at: int, yielded: bool) -> None:
        spoken = self.playing
        assert spoken is not None
        if yielded and (at < spoken.onset + spoken.length or spoken.open):
            spoken.stop = at  # its audio fades out over the last FADE_S before the stop
        spoken.open = False
        self.playing = None
        self.spoken.append(spoken)
        if not spoken.turn.backchannel:
            self.heard.append(spoken)
            self.last_agent_end = spoken.end
        self.yield_at = None
        if self.agent_bus is not None and spoken.utterance.audio is not None:
            self.agent_bus.write(
                "assistant",
                spoken.utterance.audio,
                self._s(spoken.onset),
                self._s(spoken.end),
                fade_s=FADE_S if spoken.stop is not None else 0.0,
            )
        if spoken.turn.end_call:
            raise _CallEnded("agent_end_call", self._s(spoken.end))
        self.agent.utterance_done(spoken.turn.text or "", spoken.fraction())
        if spoken.turn.backchannel:
            return  # not an answer: the caller goes on with its turn
        answered = self.awaiting and spoken.end > self.last_turn_end
        if answered and self.decided is None:
            self._caller_decides(spoken.end)
        elif self.decided is not None:
            # a turn already decided (the opening, or one held while the agent spoke) is
            # said a gap after the agent stops
            after = self._aligned(spoken.end + self._samples(self._caller_gap()))
            self.decided_at = max(self.decided_at or 0, after)

    # ---------------------------------------------------------------- caller side
    def _what_caller_heard(self, until: int | None = None) -> tuple[Audio | None, str]:
        """The agent speech the caller heard since its last decision (``until``: it is
        barging in on the agent's current utterance at that sample)."""
        parts = list(self.heard)
        if until is not None and self.playing is not None:
            parts.append(self.playing)
        texts = []
        for p in parts:
            if until is not None and p is self.playing:
                frac = (until - p.onset) / p.length if p.length else 1.0
                texts.append(words_spoken(p.turn.text or "", frac))
            else:
                texts.append(p.heard_text())
        text = " ".join(t for t in texts if t).strip()
        if self.mode == "text":
            return None, text
        pieces: list[np.ndarray] = []
        gap = np.zeros(round(0.3 * self.rate), np.float32)
        for p in parts:
            if p.utterance.audio is None:
                continue
            end = p.end if until is None else min(p.end, until)
            pieces += [p.utterance.audio.samples[: max(0, end - p.onset)], gap]
        audio = Audio(np.concatenate(pieces) if pieces else gap, self.rate, "<agent speech>")
        return audio, text

    def _caller_gap(self) -> float:
        """The caller's silence before answering: the set gap, else its persona's draw."""
        if self.settings.caller_gap_s is not None:
            return self.settings.caller_gap_s
        persona = getattr(self.caller, "persona", None)
        return response_gap(
            persona if isinstance(persona, Persona) else get_persona(None), self.gap_rng
        )

    def _caller_decides(self, at: int, barge: bool = False) -> None:
        """The caller decides its next turn at ``at`` (after hearing the agent)."""
        self.clock.wait_until(self._s(at))
        audio, text = self._what_caller_heard(at if barge else None)
        # a caller that cuts in may say something else than its answer (``interrupt``)
        answer = getattr(self.caller, "interrupt", None) if barge else None
        turn, spent = _ours(
            "simulator", f"caller {self.caller.name}", self._timed, answer or self.caller.respond,
            audio, text,
        )  # fmt: skip
        measured = spent + turn.compute_s
        last = self.playing if barge else (self.heard[-1] if self.heard else None)
        if turn.heard and last is not None:
            last.transcript = turn.heard
        self.heard = []
        self.decided = turn
        if barge:
            return
        start = (
            at
            + self._samples(self._caller_gap())
            + self._samples(self.latency.caller_delay(measured, self.rng))
        )
        if self.clock.kind == "wall":
            start = max(start, self._samples(self.clock.now()))
        self.decided_at = self._aligned(start)

    def _caller_speaks(self, at: int) -> None:
        turn = self.decided
        assert turn is not None
        self.decided, self.decided_at = None, None
        self.awaiting = False
        self.heard = []
        self._caller_pieces(turn, at)
        self.hangs_up = turn.end_call

    def _caller_turn_over(self) -> None:
        assert self.turn_end is not None
        self.last_turn_end = self.turn_end
        self.turn_end = None
        self.turn_pieces = []
        self.awaiting = True
        if self.hangs_up:
            raise _CallEnded("user_end_call", self._s(self.last_turn_end))

    def _caller_yields(self, at: int) -> None:
        self.yield_at = None
        if self.turn_end is None or self.turn_end <= at:
            return
        self.line.cut(at, self._samples(FADE_S))
        kept = [p.end for p in self.turn_pieces if any(p is q for q in self.line.pieces)]
        self.turn_end = max(kept) if kept else at

    # ---------------------------------------------------------------- events
    def _deadline(self) -> int | None:
        """When the agent's silence after the caller's turn becomes a timeout."""
        if not self.awaiting or self.playing is not None or self.decided is not None:
            return None
        silent_since = max(self.last_turn_end, self.last_agent_end)
        return silent_since + self._samples(self.agent_timeout_s)

    def _events(self, now: int) -> None:
        """Everything due at sample ``now`` (a frame boundary), in a fixed order."""
        if now >= self.max_samples:
            raise _CallEnded("max_duration", self.max_duration_s)
        deadline = self._deadline()
        late = self.pending is None or self.pending.onset > (deadline or 0)
        if deadline is not None and deadline <= now and late:
            raise self._silent(deadline)
        live = self.playing
        if live is not None and not live.open and live.onset + live.length <= now:
            self._stop_playing(live.onset + live.length, yielded=False)
        if self.playing is not None and self.yield_at is not None and self.yield_at <= now:
            self._caller_yields(now)
        if self.turn_end is not None and self.turn_end <= now:
            self._caller_turn_over()
        if self.pending is not None and self.pending.onset <= now and self.playing is None:
            self._start_playing(now)
        playing = self.playing
        while playing is not None and playing.plan and playing.plan[0][0] <= now:
            _, kind, text = playing.plan.pop(0)
            if kind == "backchannel" and self.turn_end is None and self.decided is None:
                self._caller_pieces(CallerTurn(text), now, backchannel=True)
            elif kind == "barge" and self.turn_end is None:
                if self.decided is None:
                    self._caller_decides(now, barge=True)
                self._caller_speaks(now)  # cuts in: talks over the agent
                playing.plan.clear()
        if self.decided_at is not None and self.decided_at <= now:
            if self.playing is None:
                self._caller_speaks(now)
            else:  # the agent is talking: the caller holds its turn until it stops
                self.decided_at = None

    def _next_event(self, now: int) -> int:
        """The next sample after ``now`` at which something is due."""
        due = [self.max_samples]
        if self.pending is not None:
            due.append(self.pending.onset)
        if self.playing is not None:
            due.append(self.playing.onset + self.playing.length)
            due += [t for t, _, _ in self.playing.plan]
        for t in (self.yield_at, self.turn_end, self.decided_at, self._deadline()):
            if t is not None:
                due.append(t)
        due += self.line.boundaries_after(now)
        later = [t for t in due if t > now]
        return min(later) if later else now + self.frame

    def _stuck(self) -> SystemFault:
        return SystemFault(
            f"agent {self.agent_name}: returned actions without taking in the line",
            cause="malformed_output",
        )

    def _silent(self, deadline: int) -> _CallEnded:
        """The agent said nothing within ``agent_timeout_s`` of the caller's turn end."""
        fault = SystemFault(
            f"agent {self.agent_name}: no answer within {self.agent_timeout_s:g} s",
            cause="timeout",
        )
        return _CallEnded("agent_timeout", self._s(deadline), fault=fault)

    # ---------------------------------------------------------------- main loop
    def run(self) -> _CallEnded:
        """Play the call to its end; how it ended. Faults on our side (caller, renderers)
        raise ``HarnessFault``: there is no call to score, the runner retries it."""
        try:
            self._agent_acts(lambda: self.agent.start(self.scenario, self.tools), 0)  # type: ignore[arg-type]
            self._agent_clock()
            opening, spent = _ours(
                "simulator", f"caller {self.caller.name}", self._timed, self.caller.start,
                self.scenario,
            )  # fmt: skip
            measured = spent + opening.compute_s
            self.decided = opening
            self.awaiting = True
            if self.pending is None:  # no greeting: the caller opens
                start = self._samples(self.latency.caller_delay(measured, self.rng))
                self.decided_at = self._aligned(max(start, self._samples(LINE_OPEN_S)))
            if self.mode == "audio" and self.line.effects:
                self._calibrate(opening)
            k = stalled = 0
            while True:
                now = k * self.frame
                self._events(now)
                nxt = self._frame_ceil(self._next_event(now))
                frames = max(1, min(nxt - k, MAX_BLOCK_FRAMES))
                samples, speech, words = self.line.block(k, frames)
                block = LineBlock(
                    k,
                    frames,
                    self.frame,
                    self.rate,
                    samples,
                    speech,
                    words,
                    playing=self.playing is not None,
                )
                try:
                    action, _ = self._timed(self.agent.hear, block, agent=True)
                except _NOT_AGENT_FAULTS:
                    raise
                except Exception as exc:  # the agent failed while listening (e.g. it left)
                    fault = classify_system_fault(exc, f"agent {self.agent_name}")
                    reason = "agent_timeout" if fault.cause == "timeout" else "agent_error"
                    raise _CallEnded(reason, self._s(now), fault=fault) from exc
                take = getattr(self.agent, "take_transcripts", None)
                if callable(take):
                    self._heard_speech(list(take()))
                used = frames if action is None else max(0, action.frame - k + 1)
                stalled = stalled + 1 if used == 0 else 0
                if stalled > 3:  # acts again and again without taking in the line
                    raise _CallEnded("agent_error", self._s(now), fault=self._stuck())
                self.line.record(k, used, samples)
                k += used
                if isinstance(action, StopSpeaking):
                    if self.playing is not None:
                        self._stop_playing(k * self.frame, yielded=True)
                    elif self.pending is not None and self.pending.open:
                        self.pending.open = False  # stopped before it began: nothing more comes
                elif isinstance(action, Reply):
                    self._agent_acts(action.produce, k * self.frame)
                elif isinstance(action, MoreAudio):
                    self._more_audio(action)
        except _CallEnded as end:
            return end

    def _more_audio(self, more: MoreAudio) -> None:
        """A live agent's open reply goes on (its audio right after what came before), or is
        complete; stopped by the caller, it is cut where its audio ended."""
        spoken = next((s for s in (self.playing, self.pending) if s is not None and s.open), None)
        if spoken is None:
            return  # already cut (the caller's line or a StopSpeaking closed it)
        if more.audio is not None and more.audio.num_samples:
            utt = spoken.utterance
            assert utt.audio is not None
            joined = np.concatenate([utt.audio.samples, to_rate(more.audio).samples])
            spoken.utterance = _open_utterance(
                Audio(joined.astype(np.float32), utt.audio.rate, utt.audio.source), utt.text
            )
            spoken.length = self._samples(spoken.utterance.duration)
        if not more.done:
            return
        if spoken is self.playing and more.yielded:
            self._stop_playing(spoken.onset + spoken.length, yielded=True)
        else:
            spoken.open = False  # it plays out to its end

    def _agent_clock(self) -> None:
        """An agent may settle its clock while starting (a Pipecat pipeline knows whether its
        services are local once built): follow it unless the run set the clock."""
        if not self.clock_follows_agent:
            return
        settled = str(getattr(self.agent, "clock", self.clock.kind))
        if settled != self.clock.kind:
            self.clock = make_clock(settled)

    def _calibrate(self, opening: CallerTurn) -> None:
        """Set the level of SNR-defined line effects from the caller's opening line."""
        if opening.audio is not None:
            level = rms(to_rate(opening.audio))
        else:
            if self.caller_voice is None:
                raise ConfigError("audio mode needs a caller voice (simulation.caller_voice)")
            text = self._speaking_plan(opening.text).text
            audio = _ours("renderer", "caller voice", self._laned, self.caller_voice, text)
            trimmed = self._laned(self.detector.from_audio, to_rate(audio), text).audio
            level = rms(trimmed) if trimmed is not None and trimmed.num_samples else 0.1
        for effect in self.line.effects:
            effect.calibrate(level)

    # ---------------------------------------------------------------- result
    def latency_details(self) -> dict[str, Any]:
        """How the agent's latencies were obtained, with each reply's share (``call.json``)."""
        measured = self.latency.agent_measured
        rendered = [t for t in self.latency_turns if t["rendered_by_voxeval"]]
        rendering: dict[str, Any] | None = None
        if rendered and measured:
            rendering = {
                "model": self.rendering.model_dump(),
                "turns": len(rendered),
                "seconds": round(sum(t["rendering_s"] for t in rendered), 6),
            }
        return {
            # wall: real time, the agent's latencies as they happened; virtual: computed
            "clock": self.clock.kind,
            "agent": "measured" if measured else "modelled",
            # who measured: we did (in the compute lane or not), or the agent reported it
            "measured_by": "agent" if self.agent_reports_latency else "voxeval",
            "compute_lane": self.agent_laned,
            # False: the agent ran on the virtual clock with its compute left out of call time
            # (a Pipecat pipeline stepped on virtual time), so latencies exclude inference
            "agent_compute_in_latency": not (
                self.clock.kind == "virtual"
                and getattr(self.agent, "compute_takes_call_time_on_virtual_clock", True) is False
            ),
            "tool": "modelled" if self.latency.tool is not None else None,
            "rendering_by_voxeval": rendering,
            "turns": list(self.latency_turns),
        }

    def _cut_reason(self, onset: int, stop: int) -> str:
        """Why the agent stopped at ``stop``: what the caller had on the line in the
        ``CUT_CAUSE_S`` before it (within the utterance)."""
        since = max(onset, stop - self._samples(CUT_CAUSE_S))
        near = [p for p in self.line.pieces if p.start < stop and p.end > since]
        if any(not p.backchannel for p in near):
            return "caller_speech"
        return "backchannel" if near else "no_caller_speech"

    def turn_handling(self) -> dict[str, Any]:
        """Whose settings decided the agent's turn timing: voxeval's turn adapter (with its
        policy and VAD) for a turn-based agent, the agent itself for a streaming one."""
        describe = getattr(self.agent, "describe", None)
        if isinstance(self.agent, TurnTakingAdapter) and callable(describe):
            return dict(describe())
        return {"adapter": False}

    def segments(self, t_end: float | None = None) -> list[SpeakerSegment]:
        """The call's speech segments; ``t_end``: when the call ended (speech still running
        then is marked cut by the call's end)."""
        spoken = list(self.spoken)
        for live in (self.playing,):
            if live is not None:
                spoken.append(live)
        end_at = None if t_end is None else self._samples(t_end)
        segs: list[SpeakerSegment] = []
        for s in spoken:
            text = s.turn.text or ""
            reason: str | None = None
            if s.stop is not None:
                reason = self._cut_reason(s.onset, s.stop)
            elif end_at is not None and s.onset + s.length > end_at:
                reason = "call_end"
            said = ""
            if reason is not None:
                stop = s.end if end_at is None else min(s.end, end_at)
                said = words_spoken(text, (stop - s.onset) / s.length if s.length else 1.0)
            segs.append(
                SpeakerSegment(
                    "assistant",
                    self._s(s.onset),
                    self._s(s.end),
                    s.index,
                    intended_text=text,
                    transcript=s.transcript,
                    interrupted=reason is not None,
                    backchannel=s.turn.backchannel,
                    cut_reason=reason,
                    spoken_text=said,
                )
            )
        for p in self.line.pieces:
            reason = None
            if p.cut is not None and p.cut < p.start + p.length:
                reason = "talked_over"
            elif end_at is not None and p.start < end_at < p.end:
                reason = "call_end"
            said = ""
            if reason == "talked_over":
                said = p.spoken_text()
            elif reason == "call_end" and end_at is not None:
                said = words_spoken(p.text, (end_at - p.start) / p.length)
            segs.append(
                SpeakerSegment(
                    "user",
                    self._s(p.start),
                    self._s(p.end),
                    p.turn,
                    intended_text=p.text,
                    transcript=p.transcript,
                    interrupted=reason is not None,
                    backchannel=p.backchannel,
                    cut_reason=reason,
                    spoken_text=said,
                )
            )
        return segs

    def assistant_track(self, length: float) -> Audio | None:
        bus = self.agent_bus
        if bus is None:
            return None
        p = self.playing
        if p is not None and p.utterance.audio is not None:
            bus.write("assistant", p.utterance.audio, self._s(p.onset), self._s(p.end))
        return bus.track("assistant", length)


def _open_utterance(audio: Audio, text: str) -> Utterance:
    """A live agent's reply as it arrived: untrimmed (more audio follows its end)."""
    return Utterance(audio.duration, (Chunk(0.0, audio.duration),), audio, text)


def run_call(
    scenario: Scenario,
    caller: Caller,
    agent: Any,
    tools: ToolRuntime,
    *,
    mode: Mode = "audio",
    latency_model: LatencyModel | None = None,
    max_duration_s: float = 600.0,
    agent_timeout_s: float = 15.0,
    seed: int = 0,
    caller_voice: Renderer | None = None,
    agent_voice: Renderer | None = None,
    caller_transform: AudioTransform | None = None,
    line_effects: list[LineEffect] | None = None,
    vad: FrameVAD | None = None,
    agent_vad: StreamingVAD | None = None,
    interruption_asr: Callable[[Audio], str] | None = None,
    settings: EngineSettings | None = None,
    clock: str | None = None,
    rendering_latency: RenderingLatency | None = None,
    compute_lane: ComputeLane | None = SHARED_LANE,
) -> CallResult:
    """Run one call to its end and return the timeline, the tracks and the database state.

    ``agent`` is a ``StreamingCallAgent`` or a turn-based ``CallAgent`` (given turn handling
    with ``settings``' defaults, ``agent_vad`` and ``interruption_asr``, which counts the words
    of caller speech over its reply when ``settings.min_interruption_words`` asks).
    ``clock`` defaults to the agent's ``clock`` attribute (``"wall"`` for external real-time
    agents) or ``"virtual"``; such an agent may change it while starting (read again then).
    ``caller_transform`` perturbs each caller utterance, ``line_effects`` the whole caller
    line (continuous noise, connection); both change only what the agent hears.
    ``rendering_latency``: the declared speech model charged to a text-only agent (default
    ``RenderingLatency()``); ``compute_lane``: where in-process compute is timed (None: plain
    wall time, affected by other calls running in parallel)."""
    wall0 = time.perf_counter()
    initial_db = copy.deepcopy(getattr(tools, "db", {}))
    clock_kind = clock or str(getattr(agent, "clock", "virtual"))
    call = _Call(
        scenario,
        caller,
        agent,
        tools,
        mode=mode,
        latency=latency_model or LatencyModel(),
        max_duration_s=max_duration_s,
        agent_timeout_s=agent_timeout_s,
        seed=seed,
        caller_voice=caller_voice,
        agent_voice=agent_voice,
        caller_transform=caller_transform,
        line_effects=list(line_effects or []),
        vad=vad,
        agent_vad=agent_vad,
        interruption_asr=interruption_asr,
        settings=settings or EngineSettings(),
        clock=make_clock(clock_kind),
        rendering=rendering_latency or RenderingLatency(),
        lane=compute_lane,
        clock_follows_agent=clock is None,
    )
    try:
        ended = call.run()
        reason, t_end, error = ended.reason, ended.t, ended.error
    finally:
        closer = getattr(agent, "close", None)
        if callable(closer):
            closer()
    length = round(t_end, 4)  # tracks end with the call: a hang-up cuts the other side
    timeline = call.timeline
    timeline.segments = sorted(
        (replace(s, start=round(s.start, 4), end=round(s.end, 4)) for s in call.segments(t_end)),
        key=lambda s: (s.start, s.speaker),
    )
    timeline.end = EndEvent(length, reason)
    timeline.tools = [replace(t, t=round(t.t, 4)) for t in timeline.tools]
    timeline = timeline_until_end(timeline)  # nothing after the end was on the line
    user_track = assistant_track = mixed = None
    if mode == "audio":
        user_track = call.line.track(length)
        assistant_track = call.assistant_track(length)
        assert assistant_track is not None
        mixed = mix_tracks([user_track, assistant_track], source="<bus:mixed>")
    final = tools.final_state() if hasattr(tools, "final_state") else {}
    return CallResult(
        timeline=timeline,
        user_track=user_track,
        assistant_track=assistant_track,
        mixed=mixed,
        initial_db=initial_db,
        final_db=copy.deepcopy(final),
        session=copy.deepcopy(dict(getattr(tools, "session", {}) or {})),
        end_reason=reason,
        error=error,
        duration_s=t_end,
        wall_s=time.perf_counter() - wall0,
        details={
            "latency": call.latency_details(),
            "compute_s": round(call.compute_s, 6),
            "turn_handling": call.turn_handling(),
        },
        system_fault=ended.fault,
    )


T = TypeVar("T")


def _ours(component: str, what: str, fn: Callable[..., T], *args: Any) -> T:
    """Call a part on our side of the call (caller, renderer, perturbation): its failure is
    a ``HarnessFault`` naming ``component``, never the agent's fault."""
    try:
        return fn(*args)
    except (HarnessFault, ConfigError, ProviderUnavailable):
        raise
    except Exception as exc:
        raise HarnessFault(f"{what}: {type(exc).__name__}: {exc}", component=component) from exc
