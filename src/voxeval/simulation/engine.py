"""The call engine: runs a spoken (or text-only) call between a caller and an agent.

Time model. Every event time is computed, not observed: an utterance occupies the line for its
audio duration (text-only: its word count at a speaking rate); the agent starts speaking at the
end of turn its detector heard (speech followed by ``eot_silence_s`` of silence) plus its
compute time (measured around ``respond`` and speech synthesis, or a configured latency
model); the caller answers ``caller_gap_s`` after the agent stops. A ``VirtualClock`` jumps
between events; a ``WallClock`` sleeps until them (external real-time agents).

Overlaps. A pause inside a caller utterance longer than the silence threshold ends the turn
early: the agent answers the first part and may be talking when the caller resumes (the agent
interrupted the user). When the caller talks over the agent — because it resumed, or because
its persona barges in after ``barge_in_after_s`` of agent speech — the agent yields
``yield_s`` after the overlap starts: the rest of its audio is cut and its segment is marked
``interrupted``.
"""

from __future__ import annotations

import copy
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeVar

import numpy as np

from voxeval.audio import Audio
from voxeval.benchmarks.scenario import Scenario
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.errors import (
    ConfigError,
    HarnessFault,
    ProviderUnavailable,
    SystemFault,
    classify_system_fault,
)
from voxeval.simulation.bus import BUS_RATE, AudioBus, to_rate
from voxeval.simulation.call_end import timeline_until_end
from voxeval.simulation.clock import Clock, make_clock
from voxeval.simulation.latency import LatencyModel
from voxeval.simulation.parties import AgentTurn, CallAgent, Caller, CallerTurn
from voxeval.simulation.timeline import EndEvent, SpeakerSegment, Timeline, ToolEvent
from voxeval.simulation.turn_detection import (
    Chunk,
    FrameVAD,
    TurnDetector,
    Utterance,
    words_spoken,
)

Renderer = Callable[[str], Audio]
AudioTransform = Callable[[Audio], Audio]
Mode = Literal["audio", "text"]


@dataclass(frozen=True)
class EngineSettings:
    eot_silence_s: float = 0.7  # agent's end-of-turn silence threshold
    caller_gap_s: float = 0.6  # caller's pause after the agent stops before answering
    yield_s: float = 0.3  # agent stops this long after the caller starts talking over it
    min_overlap_s: float = 0.2  # shorter caller speech over the agent does not make it yield
    words_per_s: float = 2.5  # text-only speaking rate
    pause_s: float = 1.0  # text-only length of a pause marker


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


@dataclass
class _Played:
    """One agent turn on the line (not yet committed to the timeline and bus)."""

    turn: AgentTurn
    index: int
    utterance: Utterance
    onset: float
    end: float
    interrupted: bool = False

    def heard_fraction(self) -> float:
        full = self.utterance.duration
        return 1.0 if full <= 0 else min(1.0, (self.end - self.onset) / full)


class _Call:
    def __init__(
        self,
        scenario: Scenario,
        caller: Caller,
        agent: CallAgent,
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
        vad: FrameVAD | None,
        settings: EngineSettings,
        clock: Clock,
    ) -> None:
        if mode not in ("audio", "text"):
            raise ConfigError(f"simulation.mode must be 'audio' or 'text', got {mode!r}")
        self.scenario, self.caller, self.agent, self.tools = scenario, caller, agent, tools
        self.mode, self.latency, self.settings, self.clock = mode, latency, settings, clock
        self.max_duration_s, self.agent_timeout_s = max_duration_s, agent_timeout_s
        self.rng = np.random.default_rng(seed)
        self.caller_voice, self.agent_voice = caller_voice, agent_voice
        self.caller_transform = caller_transform
        self.detector = TurnDetector(
            settings.eot_silence_s,
            vad=vad,
            words_per_s=settings.words_per_s,
            pause_s=settings.pause_s,
        )
        self.bus = AudioBus(BUS_RATE) if mode == "audio" else None
        self.timeline = Timeline()
        self.user_turns = 0
        self.agent_turns = 0
        self.agent_detects_turns = bool(getattr(agent, "detects_turns", False))
        self.agent_reports_latency = bool(getattr(agent, "reports_latency", False))

    # ---------------------------------------------------------------- rendering
    def _caller_utterances(self, turn: CallerTurn) -> tuple[Utterance, Utterance]:
        """(what the caller said, what the agent hears after perturbations)."""
        if self.mode == "text":
            rate = float(getattr(self.caller, "speech_rate", 1.0))
            utt = self.detector.from_text(turn.text, rate_factor=rate)
            return utt, utt
        audio = turn.audio
        if audio is None:
            if self.caller_voice is None:
                raise ConfigError("audio mode needs a caller voice (simulation.caller_voice)")
            audio = _ours("renderer", "caller voice", self.caller_voice, turn.text)
        clean = self.detector.from_audio(to_rate(audio), turn.text)
        if clean.audio is None or not clean.chunks:
            return clean, clean
        heard_audio = clean.audio
        if self.caller_transform is not None:
            perturbed = _ours(
                "perturbation", "caller transform", self.caller_transform, clean.audio
            )
            heard_audio = to_rate(perturbed)
        groups = self.detector.group(self.detector.speech_runs(heard_audio))
        chunks = tuple(Chunk(a, b) for a, b in groups) or clean.chunks
        heard = Utterance(heard_audio.duration, chunks, heard_audio, turn.text)
        return clean, heard

    def _agent_utterance(self, turn: AgentTurn) -> tuple[Utterance | None, float]:
        """The agent's speech and the seconds spent synthesising it (part of its latency)."""
        text = (turn.text or "").strip()
        if self.mode == "text":
            return (self.detector.from_text(text) if text else None), 0.0
        if turn.audio is not None:
            utt = self.detector.from_audio(to_rate(turn.audio), text)
            return (utt if utt.chunks else None), 0.0
        if not text:
            return None, 0.0
        if self.agent_voice is None:
            raise ConfigError("audio mode needs an agent voice (simulation.agent_voice)")
        t0 = time.perf_counter()
        audio = _ours("renderer", "agent voice", self.agent_voice, text)
        spent = time.perf_counter() - t0
        utt = self.detector.from_audio(to_rate(audio), text)
        return (utt if utt.chunks else None), spent

    # ---------------------------------------------------------------- agent side
    def _agent_turn(
        self, call: Callable[[], AgentTurn | None], eot: float, wait_at: float | None = None
    ) -> _Played | None:
        """Run one agent decision at end-of-turn ``eot``; None when it chose not to speak.
        ``wait_at``: when to hand the audio over (real-time streaming agents get it as soon as
        the caller starts speaking)."""
        self.clock.wait_until(eot if wait_at is None else wait_at)
        t0 = time.perf_counter()
        try:
            turn = call()
        except _NOT_AGENT_FAULTS:
            raise
        except Exception as exc:  # the agent failed: the call ends, scored as a failure
            fault = classify_system_fault(exc, f"agent {self.agent.name}")
            reason = "agent_timeout" if fault.cause == "timeout" else "agent_error"
            raise _CallEnded(reason, eot, fault=fault) from exc
        measured = time.perf_counter() - t0
        if turn is None:
            return None
        try:
            utt, render_s = self._agent_utterance(turn)
        except _NOT_AGENT_FAULTS:
            raise  # e.g. our renderer failed on the agent's text
        except Exception as exc:  # the agent's own audio cannot be played
            fault = SystemFault(
                f"agent {self.agent.name}: unusable audio: {type(exc).__name__}: {exc}",
                cause="malformed_output",
            )
            raise _CallEnded("agent_error", eot, fault=fault) from exc
        base = turn.compute_s if self.agent_reports_latency else measured + turn.compute_s
        delay = self.latency.agent_delay(base + render_s, len(turn.tool_calls), self.rng)
        if self.clock.kind == "wall" and not self.agent_reports_latency:
            delay = max(delay, self.clock.now() - eot)
        for k, record in enumerate(turn.tool_calls):
            self.timeline.tools.append(
                ToolEvent(
                    t=eot + delay * (k + 1) / (len(turn.tool_calls) + 1),
                    turn=self.agent_turns,
                    name=record.name,
                    arguments=dict(record.arguments),
                    result=record.result,
                    kind=record.kind,
                    valid=record.valid,
                    error=record.error,
                )
            )
        if utt is None and not turn.end_call:
            raise self._silent(eot)
        if delay > self.agent_timeout_s:
            raise self._silent(eot)
        onset = eot + delay
        if utt is None:  # hung up without a word
            raise _CallEnded("agent_end_call", onset)
        played = _Played(turn, self.agent_turns, utt, onset, onset + utt.duration)
        self.agent_turns += 1
        return played

    def _silent(self, eot: float) -> _CallEnded:
        """The agent said nothing within ``agent_timeout_s`` of the caller's turn end."""
        fault = SystemFault(
            f"agent {self.agent.name}: no answer within {self.agent_timeout_s:g} s",
            cause="timeout",
        )
        return _CallEnded("agent_timeout", eot + self.agent_timeout_s, fault=fault)

    def _commit_agent(self, played: _Played, transcript: str = "") -> None:
        text = played.turn.text or ""
        self.timeline.segments.append(
            SpeakerSegment(
                "assistant",
                played.onset,
                played.end,
                played.index,
                intended_text=text,
                transcript=transcript,
                interrupted=played.interrupted,
            )
        )
        if self.bus is not None and played.utterance.audio is not None:
            self.bus.write("assistant", played.utterance.audio, played.onset, played.end)

    def _answer(self, clean: Utterance, heard: Utterance, u0: float) -> list[_Played]:
        """The agent answers each chunk of the caller's turn it detected as a turn end."""
        chunks: tuple[Chunk, ...] = heard.chunks
        if self.agent_detects_turns:  # the agent finds turn ends itself: it gets the whole turn
            chunks = (Chunk(0.0, heard.duration, heard.text),)
        first_seg = len(self.timeline.segments)
        for n, c in enumerate(clean.chunks):
            self.timeline.segments.append(
                SpeakerSegment(
                    "user",
                    u0 + c.start,
                    u0 + c.end,
                    self.user_turns,
                    intended_text=c.text if self.mode == "text" else (clean.text if n == 0 else ""),
                )
            )
        if self.bus is not None and heard.audio is not None:
            self.bus.write("user", heard.audio, u0)
        self.user_turns += 1
        played: list[_Played] = []
        heard_texts: list[str] = []
        last_end = -1.0
        for i, chunk in enumerate(chunks):
            eot = u0 + chunk.end + (0.0 if self.agent_detects_turns else self.detector.silence_s)
            eot = max(eot, last_end)
            if eot > self.max_duration_s:
                raise _CallEnded("max_duration", self.max_duration_s)
            audio_in = (
                heard.audio.slice(chunk.start, chunk.end) if heard.audio is not None else None
            )
            text_in = chunk.text if self.mode == "text" else None
            streams = self.clock.kind == "wall" and self.agent_reports_latency
            part = self._agent_turn(
                functools.partial(self.agent.respond, audio_in, text_in),
                eot,
                wait_at=u0 + chunk.start if streams else None,
            )
            if part is None:
                raise self._silent(eot)
            heard_texts.append(part.turn.heard or "")
            for later in chunks[i + 1 :]:  # caller resumes over the agent: the agent yields
                s, e = u0 + later.start, u0 + later.end
                overlap_start = max(part.onset, s)
                if s < part.end and e - overlap_start >= self.settings.min_overlap_s:
                    cut = overlap_start + self.settings.yield_s
                    if cut < part.end:
                        # barged in on only if the caller started after the agent did
                        part.end, part.interrupted = cut, s > part.onset
                    break
            played.append(part)
            last_end = part.end
            if part.turn.end_call:
                break
        self._set_user_transcripts(first_seg, len(clean.chunks), heard_texts)
        for part in played[:-1]:
            self._commit_agent(part)
        return played

    def _set_user_transcripts(self, first: int, count: int, heard: list[str]) -> None:
        if self.mode == "text" and count == len(heard):  # text: one intended text per chunk
            pairs = list(zip(range(first, first + count), heard, strict=True))
        else:  # audio: the turn's intended text sits on its first segment, so its transcript too
            pairs = [(first, " ".join(h for h in heard if h))] if count else []
        for idx, text in pairs:
            if text:
                self.timeline.segments[idx] = replace(self.timeline.segments[idx], transcript=text)

    # ---------------------------------------------------------------- caller side
    def _caller_hears(self, last: _Played, earlier: list[_Played]) -> tuple[Audio | None, str]:
        parts = [*earlier, last]
        text = " ".join(
            words_spoken(p.turn.text or "", p.heard_fraction())
            if p.interrupted
            else p.turn.text or ""
            for p in parts
        ).strip()
        if self.mode == "text":
            return None, text
        pieces: list[np.ndarray] = []
        gap = np.zeros(round(0.3 * BUS_RATE), np.float32)
        for p in parts:
            if p.utterance.audio is not None:
                pieces += [p.utterance.audio.slice(0, p.end - p.onset).samples, gap]
        audio = Audio(np.concatenate(pieces) if pieces else gap, BUS_RATE, "<agent speech>")
        return audio, text

    def _caller_turn(self, played: list[_Played]) -> tuple[CallerTurn, float]:
        """The caller's next turn and when it starts; commits the agent's last turn."""
        last = played[-1]
        patience = getattr(self.caller, "barge_in_after_s", None)
        barge = None
        if patience is not None and last.end - last.onset > patience + self.settings.min_overlap_s:
            barge = last.onset + float(patience)
            last.end = min(last.end, barge + self.settings.yield_s)
            last.interrupted = True
        audio, text = self._caller_hears(last, played[:-1] if barge is None else [])
        if barge is not None:  # the caller only heard up to the moment it cut in
            text = words_spoken(
                last.turn.text or "", (barge - last.onset) / last.utterance.duration
            )
            if audio is not None:
                audio = audio.slice(0, barge - last.onset)
        self.clock.wait_until(last.end if barge is None else barge)
        t0 = time.perf_counter()
        turn = _ours("simulator", f"caller {self.caller.name}", self.caller.respond, audio, text)
        measured = time.perf_counter() - t0 + turn.compute_s
        self._commit_agent(last, turn.heard or "")
        if barge is not None:
            return turn, barge
        start = (
            last.end + self.settings.caller_gap_s + self.latency.caller_delay(measured, self.rng)
        )
        if self.clock.kind == "wall":
            start = max(start, self.clock.now())
        return turn, start

    # ---------------------------------------------------------------- main loop
    def run(self) -> _CallEnded:
        """Play the call to its end; how it ended. Faults on our side (caller, renderers)
        raise ``HarnessFault``: there is no call to score, the runner retries it."""
        try:
            greeting = self._agent_turn(lambda: self.agent.start(self.scenario, self.tools), 0.0)
            t0 = time.perf_counter()
            turn = _ours(
                "simulator", f"caller {self.caller.name}", self.caller.start, self.scenario
            )
            measured = time.perf_counter() - t0 + turn.compute_s
            if greeting is not None:
                turn, start = self._after_greeting(greeting, turn)
            else:
                start = self.latency.caller_delay(measured, self.rng)
            while True:
                if start >= self.max_duration_s:
                    raise _CallEnded("max_duration", self.max_duration_s)
                clean, heard = self._caller_utterances(turn)
                if turn.end_call:
                    self._place_user(clean, heard, start)
                    raise _CallEnded("user_end_call", start + clean.duration)
                if not clean.chunks:
                    raise HarnessFault(
                        f"the caller's turn contains no speech: {turn.text!r}",
                        component="renderer" if self.mode == "audio" else "simulator",
                    )
                played = self._answer(clean, heard, start)
                if played[-1].turn.end_call:
                    self._commit_agent(played[-1])
                    raise _CallEnded("agent_end_call", played[-1].end)
                turn, start = self._caller_turn(played)
        except _CallEnded as end:
            return end

    def _after_greeting(self, greeting: _Played, opening: CallerTurn) -> tuple[CallerTurn, float]:
        """The caller waits for the greeting, then says its opening line (already decided)."""
        self._commit_agent(greeting)
        if greeting.turn.end_call:
            raise _CallEnded("agent_end_call", greeting.end)
        return opening, greeting.end + self.settings.caller_gap_s

    def _place_user(self, clean: Utterance, heard: Utterance, u0: float) -> None:
        for c in clean.chunks:
            self.timeline.segments.append(
                SpeakerSegment("user", u0 + c.start, u0 + c.end, self.user_turns, clean.text)
            )
        if self.bus is not None and heard.audio is not None:
            self.bus.write("user", heard.audio, u0)
        self.user_turns += 1


def run_call(
    scenario: Scenario,
    caller: Caller,
    agent: CallAgent,
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
    vad: FrameVAD | None = None,
    settings: EngineSettings | None = None,
    clock: str | None = None,
) -> CallResult:
    """Run one call to its end and return the timeline, the tracks and the database state.

    ``clock`` defaults to the agent's ``clock`` attribute (``"wall"`` for external real-time
    agents) or ``"virtual"``. ``caller_transform`` perturbs only what the agent hears."""
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
        vad=vad,
        settings=settings or EngineSettings(),
        clock=make_clock(clock_kind),
    )
    try:
        ended = call.run()
        reason, t_end, error = ended.reason, ended.t, ended.error
    finally:
        closer = getattr(agent, "close", None)
        if callable(closer):
            closer()
    call.timeline.end = EndEvent(round(t_end, 4), reason)
    call.timeline.segments = sorted(
        (replace(s, start=round(s.start, 4), end=round(s.end, 4)) for s in call.timeline.segments),
        key=lambda s: (s.start, s.speaker),
    )
    call.timeline.tools = [replace(t, t=round(t.t, 4)) for t in call.timeline.tools]
    call.timeline = timeline_until_end(call.timeline)  # nothing after the end was on the line
    bus = call.bus
    length = round(t_end, 4)  # tracks end with the call: a hang-up cuts the other side
    final = tools.final_state() if hasattr(tools, "final_state") else {}
    return CallResult(
        timeline=call.timeline,
        user_track=bus.track("user", length) if bus is not None else None,
        assistant_track=bus.track("assistant", length) if bus is not None else None,
        mixed=bus.mixed(length) if bus is not None else None,
        initial_db=initial_db,
        final_db=copy.deepcopy(final),
        session=copy.deepcopy(dict(getattr(tools, "session", {}) or {})),
        end_reason=reason,
        error=error,
        duration_s=t_end,
        wall_s=time.perf_counter() - wall0,
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
