"""Turn handling for agents that answer whole turns (``CallAgent.respond``).

A voice agent built from turn-based parts still has to listen to a phone line: find where the
caller stopped, decide whether a pause is the end of the turn, notice the caller talking over
its own speech and stop, and remember what the caller actually heard of a reply it cut short.
``TurnTakingAdapter`` does this for any ``CallAgent`` and makes it a ``StreamingCallAgent``:

* **voice activity** per frame from a streaming VAD (``EnergyFrameVAD``, or Silero through
  ``SileroFrameVAD``); in text mode the frames say whether the caller is talking;
* **end of turn**: after caller speech, ``eot_silence_ms`` of silence plus ``patience_ms``
  (an endpointing delay: the agent keeps listening that much longer, so a caller who resumes
  within it is still in the same turn); speech bursts shorter than ``min_speech_ms`` are
  ignored (clicks, noise);
* **barge-in** (the interruption policy, modelled on LiveKit Agents' ``min_interruption_duration``
  / ``min_interruption_words`` and Pipecat's minimum-words strategy): while its reply plays,
  caller speech lasting ``barge_in_ms`` makes it stop (None: it never stops), once it also
  holds ``min_interruption_words`` recognised words that are not backchannel words ("mm-hm",
  "okay", "right"); speech that does not stop it (a backchannel, a cough) is not answered.
  Words come from the line in text mode and from ``transcribe`` (an ASR) in audio mode;
* **history**: when its reply was cut, the wrapped agent's ``heard_by_caller(text)`` gets the
  words the caller heard, so its next answer starts from what was said (``CallAgentBase``'s
  default ignores them).
"""

from __future__ import annotations

import functools
import math
import re
from collections import deque
from collections.abc import Callable
from typing import ClassVar, cast

import numpy as np
import numpy.typing as npt

from voxeval.audio import Audio
from voxeval.benchmarks.eva.scenario import Scenario
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.json_types import JSONObject
from voxeval.providers.base import VAD, VADStream
from voxeval.providers.voices.speech_renderer import PAUSE_MARKER
from voxeval.systems.call import (
    AgentAction,
    AgentTurn,
    CallAgent,
    HeardSpeech,
    LineBlock,
    Reply,
    StopSpeaking,
    StreamingCallAgent,
    is_streaming,
)
from voxeval.systems.turn_policy import FrameVAD, TurnPolicy

# Frame levels below this are digital silence (an empty line, or a lost packet).
DIGITAL_SILENCE_DB = -90.0
SPEECH_PAD_MS = 100.0  # line kept before and after the caller's speech in what it answers
# How often (ms of caller speech) the words of a would-be interruption are counted again in
# audio mode: each count is one ASR pass over the speech so far.
WORD_CHECK_MS = 200.0
# Listener tokens that never count as interruption words (English and Spanish, as the
# callers' backchannels and the usual ASR spellings of them).
BACKCHANNEL_WORDS = frozenset(
    {
        *("mm", "mmm", "mhm", "mmhm", "mmhmm", "hm", "hmm", "uhhuh", "uhuh", "uh", "um", "ah"),
        *("oh", "aha", "okay", "ok", "yeah", "yes", "yep", "yup", "right", "sure", "alright"),
        *("aja", "si", "vale", "claro", "ya", "bueno"),
    }
)
_NOT_LETTERS = re.compile(r"[^\w]+")


def interruption_words(text: str) -> int:
    """The words of ``text`` that are not backchannel words (hyphens and accents ignored, so
    "Mm-hmm." and "ajá" are backchannels)."""
    count = 0
    for raw in text.lower().split():
        word = _NOT_LETTERS.sub("", raw.replace("á", "a").replace("í", "i"))
        if word and word not in BACKCHANNEL_WORDS:
            count += 1
    return count


class _SlidingExtreme:
    """Minimum (or maximum) of the last ``size`` values pushed, in O(1) amortised time."""

    def __init__(self, size: int, largest: bool) -> None:
        self.size, self.sign = size, -1.0 if largest else 1.0
        self._count = 0
        self._queue: deque[tuple[int, float]] = deque()

    def push(self, value: float) -> float:
        v = self.sign * value
        while self._queue and self._queue[-1][1] >= v:
            self._queue.pop()
        self._queue.append((self._count, v))
        self._count += 1
        while self._queue[0][0] <= self._count - 1 - self.size:
            self._queue.popleft()
        return self.sign * self._queue[0][1]


class EnergyFrameVAD:
    """Speech where a frame's level is above ``floor_db`` dBFS, ``margin_db`` above the
    line's noise floor (the quietest frame of the last ``noise_window_s``: speech without a
    dip for longer than that stops counting) and within
    ``range_db`` of the loudest frame of the last ``peak_window_s`` (the caller's speech
    level). Digital silence counts only as a stretch of three frames or more, so a lost packet
    on a noisy line does not drop the floor. Needs no model; fooled by loud bursts of
    non-stationary noise, as energy detectors are."""

    def __init__(
        self,
        floor_db: float = -50.0,
        margin_db: float = 10.0,
        range_db: float = 25.0,
        noise_window_s: float = 5.0,
        peak_window_s: float = 30.0,
        rate: int = 16000,
    ) -> None:
        self.floor_db, self.margin_db, self.range_db = floor_db, margin_db, range_db
        self.noise_window_s, self.peak_window_s, self.rate = noise_window_s, peak_window_s, rate
        self._noise: _SlidingExtreme | None = None
        self._peak: _SlidingExtreme | None = None
        self._floor: float | None = None
        self._silent_run = 0

    def _levels(self, frame_len: int) -> tuple[_SlidingExtreme, _SlidingExtreme]:
        if self._noise is None or self._peak is None:
            frame_s = frame_len / self.rate
            self._noise = _SlidingExtreme(max(1, round(self.noise_window_s / frame_s)), False)
            self._peak = _SlidingExtreme(max(1, round(self.peak_window_s / frame_s)), True)
        return self._noise, self._peak

    def is_speech(self, frame: npt.NDArray[np.float32]) -> bool:
        noise, peak = self._levels(frame.size)
        x = frame.astype(np.float64)
        db = 10.0 * math.log10(float(np.dot(x, x)) / max(1, x.size) + 1e-12)
        if db < DIGITAL_SILENCE_DB:
            self._silent_run += 1
            if self._silent_run >= 3:
                self._floor = noise.push(DIGITAL_SILENCE_DB)
            return False
        self._silent_run = 0
        top, floor = peak.push(db), noise.push(db)
        return db > max(self.floor_db, floor + self.margin_db, top - self.range_db)

    def silence(self, frames: int, frame_len: int) -> None:
        noise, _ = self._levels(frame_len)
        self._silent_run += frames
        if self._silent_run >= 3:
            self._floor = noise.push(DIGITAL_SILENCE_DB)


class SileroFrameVAD:
    """Silero speech probabilities from a provider's stream (``open_stream()``), speech at
    ``threshold``; the decision of a frame is the latest 32 ms window's."""

    def __init__(self, stream: VADStream, threshold: float = 0.5) -> None:
        self.stream, self.threshold = stream, threshold
        self._p = 0.0

    def is_speech(self, frame: npt.NDArray[np.float32]) -> bool:
        probs = self.stream.push(frame)
        if probs.size:
            self._p = float(probs[-1])
        return self._p >= self.threshold

    def silence(self, frames: int, frame_len: int) -> None:
        # enough zeros to let the network settle; more would only cost time
        self.stream.push(np.zeros(min(frames * frame_len, 8000), np.float32))
        self._p = 0.0


def frame_vad_from(provider: VAD) -> FrameVAD:
    """A streaming VAD for a VAD provider that can open a stream (``streams``: Silero)."""
    if not provider.streams:
        raise TypeError(f"vad {provider.name}: cannot stream (no open_stream())")
    return SileroFrameVAD(provider.open_stream(), provider.threshold)


def words_spoken(text: str, fraction: float) -> str:
    """The first ``fraction`` of ``text``'s words (what a listener heard before a cut)."""
    words = PAUSE_MARKER.sub(" ", text).split()
    keep = int(np.floor(len(words) * max(0.0, min(1.0, fraction)) + 1e-9))
    return " ".join(words[:keep])


def _frames(ms: float, frame_s: float) -> int:
    return max(1, math.ceil(ms / 1000.0 / frame_s - 1e-9))


class _Run:
    """One stretch of caller speech since the agent's last reply (frame indices)."""

    __slots__ = (
        "end",
        "heard_playing",
        "next_word_check",
        "only_while_playing",
        "start",
        "stopped_agent",
    )

    def __init__(self, start: int, playing: bool) -> None:
        self.start = self.end = start
        self.only_while_playing = playing
        self.heard_playing = 0
        self.stopped_agent = False
        self.next_word_check = 0  # frames of speech over the reply at the next word count


class TurnTakingAdapter:
    """A ``CallAgent`` with turn handling (see the module docstring): a
    ``StreamingCallAgent`` whose clock and latency settings are the wrapped agent's."""

    streaming: ClassVar[bool] = True

    def __init__(
        self,
        agent: CallAgent,
        policy: TurnPolicy | None = None,
        vad: FrameVAD | None = None,
        transcribe: Callable[[Audio], str] | None = None,
    ) -> None:
        self.agent = agent
        self.name = agent.name
        self.policy = policy or TurnPolicy()
        self.vad: FrameVAD = vad if vad is not None else EnergyFrameVAD()
        self.transcribe = transcribe
        self.word_checks = 0  # ASR passes spent on would-be interruptions (audio mode)
        self._frame_s = 0.0
        self._need = self._min_run = 1
        self._barge: int | None = None
        self._reset_input()
        self._silence = 0
        self._pending = False
        self._rate = 16000
        self._frame_len = 0

    @property
    def clock(self) -> str:
        return self.agent.clock

    @property
    def reports_latency(self) -> bool:
        return self.agent.reports_latency

    @property
    def compute_takes_call_time_on_virtual_clock(self) -> bool:
        return self.agent.compute_takes_call_time_on_virtual_clock

    def take_transcripts(self) -> list[HeardSpeech]:
        """The wrapped agent's transcripts come in its ``AgentTurn.heard``, not here."""
        return []

    def describe(self) -> JSONObject:
        """The settings that decide this agent's timing in a call (``call.json``)."""
        vad = type(self.vad).__name__
        return {
            "adapter": True,
            **self.policy.model_dump(),
            "vad": {"EnergyFrameVAD": "energy", "SileroFrameVAD": "silero"}.get(vad, vad),
        }

    def _reset_input(self) -> None:
        self._audio: dict[int, npt.NDArray[np.float32]] = {}
        self._words: list[tuple[int, str]] = []
        self._runs: list[_Run] = []
        self._run: _Run | None = None

    def start(self, scenario: Scenario, tools: ToolRuntime) -> AgentTurn | None:
        return self.agent.start(scenario, tools)

    def _configure(self, block: LineBlock) -> None:
        if block.frame_s == self._frame_s:
            return
        p, fs = self.policy, block.frame_s
        self._frame_s, self._rate, self._frame_len = fs, block.rate, block.frame_len
        self._need = _frames(p.eot_silence_ms + p.patience_ms, fs)
        self._min_run = _frames(p.min_speech_ms, fs) if p.min_speech_ms > 0 else 0
        self._barge = None if p.barge_in_ms is None else _frames(p.barge_in_ms, fs)
        self._word_every = _frames(WORD_CHECK_MS, fs)

    # ------------------------------------------------------------------ listening
    def _answerable(self) -> list[_Run]:
        return [
            r
            for r in self._runs
            if r.end - r.start >= self._min_run and (r.stopped_agent or not r.only_while_playing)
        ]

    def _ready(self, playing: bool) -> bool:
        return not self._pending and not playing and self._run is None and bool(self._answerable())

    def _close_run(self) -> None:
        if self._run is not None:
            self._runs.append(self._run)
            self._run = None

    def hear(self, block: LineBlock) -> AgentAction | None:
        self._configure(block)
        if self._ready(block.playing) and self._silence >= self._need:
            return self._reply(block.start - 1)
        if block.silent:
            return self._hear_silence(block)
        for i in range(block.frames):
            k = block.start + i
            frame = block.frame(i)
            if frame is not None:
                self._audio[k] = frame
                speech = self.vad.is_speech(frame)
            else:
                speech = bool(block.speech[i]) if block.speech is not None else False
            word = block.words.get(k)
            if word:
                self._words.append((k, word))
            if speech:
                self._silence = 0
                if self._run is None:
                    self._run = _Run(k, block.playing)
                run = self._run
                run.end = k + 1
                if block.playing:
                    run.heard_playing += 1
                    if self._interrupts(run, k):
                        run.stopped_agent = True
                        return StopSpeaking(k)
                else:
                    run.only_while_playing = False
                continue
            self._close_run()
            self._silence += 1
            if self._ready(block.playing) and self._silence >= self._need:
                return self._reply(k)
        return None

    def _interrupts(self, run: _Run, k: int) -> bool:
        """Does caller speech ``run`` (up to frame ``k``) stop the reply now?"""
        if self._barge is None or run.heard_playing < self._barge:
            return False
        need = self.policy.min_interruption_words
        if need == 0:
            return True
        if self._audio:  # audio mode: count the words the ASR hears, every WORD_CHECK_MS
            if self.transcribe is None:
                raise ValueError(
                    f"agent {self.name}: min_interruption_words={need} needs an ASR to count "
                    "the caller's words in audio mode (none given)"
                )
            if run.heard_playing < run.next_word_check:
                return False
            run.next_word_check = run.heard_playing + self._word_every
            return interruption_words(self._transcribe_run(run, k)) >= need
        said = " ".join(w for f, w in self._words if run.start <= f <= k)
        return interruption_words(said) >= need

    def _transcribe_run(self, run: _Run, k: int) -> str:
        assert self.transcribe is not None
        silent = np.zeros(self._frame_len, np.float32)
        first = max(0, run.start - _frames(SPEECH_PAD_MS, self._frame_s))
        pieces = [self._audio.get(f, silent) for f in range(first, k + 1)]
        self.word_checks += 1
        audio = Audio(np.concatenate(pieces).astype(np.float32), self._rate, "<caller line>")
        return str(self.transcribe(audio))

    def _hear_silence(self, block: LineBlock) -> AgentAction | None:
        self._close_run()
        if block.samples is None and block.speech is None:
            self.vad.silence(block.frames, block.frame_len)
        if self._ready(block.playing):
            remaining = self._need - self._silence
            if remaining <= block.frames:
                self._silence = self._need
                return self._reply(block.start + remaining - 1)
        self._silence += block.frames
        return None

    def _reply(self, frame: int) -> Reply:
        runs = self._answerable()
        # a little of the line around the speech, as VADs pad their segments
        pad = _frames(SPEECH_PAD_MS, self._frame_s)
        first, last = max(0, runs[0].start - pad), runs[-1].end + min(pad, self._silence)
        ignored = [r for r in self._runs if r not in runs]
        audio: Audio | None = None
        text: str | None = None
        if self._audio:
            silent = np.zeros(self._frame_len, np.float32)
            pieces = [self._audio.get(k, silent) for k in range(first, last)]
            samples = np.concatenate(pieces).astype(np.float32)
            for r in ignored:  # speech it chose not to take in (e.g. a backchannel)
                a, b = max(r.start, first) - first, min(r.end, last) - first
                if b > a:
                    samples[a * self._frame_len : b * self._frame_len] = 0.0
            audio = Audio(samples, self._rate, "<caller line>")
        else:
            skip = {k for r in ignored for k in range(r.start, r.end)}
            text = " ".join(w for k, w in self._words if k not in skip).strip()
        self._reset_input()
        self._pending = True
        return Reply(frame, functools.partial(self.agent.respond, audio, text))

    def utterance_done(self, text: str, spoken_fraction: float) -> None:
        self._pending = False
        if spoken_fraction >= 1.0 or not text:
            return
        self.agent.heard_by_caller(words_spoken(text, spoken_fraction))

    def close(self) -> None:
        self.agent.close()


def as_streaming(
    agent: CallAgent | StreamingCallAgent,
    policy: TurnPolicy | None = None,
    vad: FrameVAD | None = None,
    transcribe: Callable[[Audio], str] | None = None,
) -> StreamingCallAgent:
    """``agent`` itself when it listens to the line (``streaming``), else ``agent`` with turn
    handling: its own ``turn_policy`` and ``turn_vad()`` when it has them (not None), else
    ``policy`` and ``vad`` (the run's defaults); ``transcribe`` counts the words of would-be
    interruptions."""
    if is_streaming(agent):
        return agent
    agent = cast(CallAgent, agent)  # not streaming: a turn-by-turn agent
    own_vad = agent.turn_vad()
    return TurnTakingAdapter(
        agent,
        agent.turn_policy if agent.turn_policy is not None else policy,
        own_vad if own_vad is not None else vad,
        transcribe,
    )
