"""The caller's side of the phone line: what the agent receives, frame by frame.

The line carries the caller's speech pieces (its turns and backchannels) where the engine placed
them, plus the acoustic environment, which runs for the whole call: background noise is there
between the caller's turns too, and connection degradation (codec, packet loss, gain drift)
applies to everything on the line. Per EVA-Bench (PROTOCOLS.md), perturbations are on the
caller's side only: the agent's audio reaches the caller clean.

The line is a pure function of the placed pieces and the call seed: any stretch can be built
again and gives the same samples, so the engine may build a block ahead, let the agent stop
part-way and build the rest again after the caller reacted. ``user.wav`` is what the agent
heard: the blocks it took in, in order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np
import numpy.typing as npt

from voxeval.audio import Audio, mulaw_roundtrip
from voxeval.audio.noise_environments import environment_noise
from voxeval.providers.voices.speech_renderer import PAUSE_MARKER
from voxeval.systems.turn_handling import words_spoken

Samples = npt.NDArray[np.float32]
NOISE_BLOCK_S = 10.0  # noise is generated (and seeded) in blocks of this length


class LineEffect(Protocol):
    """A perturbation of the whole line. ``keeps_silence``: an empty line stays empty (the
    engine may then skip it without building it)."""

    keeps_silence: bool

    def apply(self, samples: Samples, start: int, rate: int) -> Samples:
        """``samples`` of the line from sample ``start`` on, perturbed (same length)."""
        ...

    def calibrate(self, speech_rms: float) -> None:
        """The caller's speech level (RMS of its first utterance), for effects set by SNR."""
        ...


class ContinuousNoise:
    """A noise environment under the whole call, ``snr_db`` below the caller's speech level.
    Block ``b`` of ``NOISE_BLOCK_S`` seconds is drawn from seed (call seed, ``b``)."""

    keeps_silence = False

    def __init__(self, environment: str, snr_db: float, seed: int) -> None:
        self.environment, self.snr_db, self.seed = environment, float(snr_db), seed
        self._scale: float | None = None
        self._blocks: dict[int, Samples] = {}

    def calibrate(self, speech_rms: float) -> None:
        if self._scale is None:
            # environment_noise is generated at RMS 0.1
            self._scale = speech_rms / (0.1 * 10 ** (self.snr_db / 20.0))

    def _block(self, b: int, rate: int) -> Samples:
        if b not in self._blocks:
            if len(self._blocks) > 4:
                self._blocks.pop(min(self._blocks))
            seed = int(np.random.SeedSequence([self.seed, b]).generate_state(1)[0])
            noise = environment_noise(self.environment, NOISE_BLOCK_S, rate=rate, seed=seed)
            self._blocks[b] = noise.samples.astype(np.float32)
        return self._blocks[b]

    def apply(self, samples: Samples, start: int, rate: int) -> Samples:
        if self._scale is None:
            raise RuntimeError("continuous noise used before the caller's level was known")
        size = round(NOISE_BLOCK_S * rate)
        out = samples.astype(np.float32, copy=True)
        pos = 0
        while pos < out.size:
            b, offset = divmod(start + pos, size)
            take = min(out.size - pos, size - offset)
            out[pos : pos + take] += self._scale * self._block(b, rate)[offset : offset + take]
            pos += take
        return out


class LineConnection:
    """The EVA connection degradation applied to the line: mu-law round trip, loss of
    ``loss_rate`` of the 20 ms packets, and a gain drifting between ``gain_low`` and
    ``gain_high`` (a random level per second, interpolated)."""

    keeps_silence = True
    PACKET_S = 0.02
    GAIN_SEGMENT_S = 1.0

    def __init__(self, loss_rate: float, gain_low: float, gain_high: float, seed: int) -> None:
        self.loss_rate, self.gain_low, self.gain_high = loss_rate, gain_low, gain_high
        self.seed = seed
        self._draws: dict[int, np.ndarray] = {}

    def calibrate(self, speech_rms: float) -> None:
        return None

    def _lost(self, packet: int) -> bool:
        block, index = divmod(packet, 1000)
        if block not in self._draws:
            if len(self._draws) > 4:
                self._draws.pop(min(self._draws))
            self._draws[block] = np.random.default_rng([self.seed, 1, block]).random(1000)
        return bool(self._draws[block][index] < self.loss_rate)

    def _gain(self, segment: int) -> float:
        rng = np.random.default_rng([self.seed, 2, segment])
        return float(rng.uniform(self.gain_low, self.gain_high))

    def apply(self, samples: Samples, start: int, rate: int) -> Samples:
        out = mulaw_roundtrip(Audio(samples, rate)).samples.astype(np.float64)
        packet = round(self.PACKET_S * rate)
        first, last = start // packet, (start + out.size - 1) // packet
        for p in range(first, last + 1):
            if self._lost(p):
                a, b = max(0, p * packet - start), min(out.size, (p + 1) * packet - start)
                out[a:b] = 0.0
        seg = round(self.GAIN_SEGMENT_S * rate)
        s0, s1 = max(0, start // seg - 1), (start + out.size) // seg + 1
        centres = (np.arange(s0, s1 + 1) + 0.5) * seg
        gains = [self._gain(s) for s in range(s0, s1 + 1)]
        out *= np.interp(np.arange(start, start + out.size), centres, gains)
        return out.astype(np.float32)


@dataclass(eq=False)
class LinePiece:
    """A stretch of caller speech on the line (``samples`` None in text mode)."""

    start: int
    length: int
    text: str
    turn: int
    samples: Samples | None = None
    backchannel: bool = False
    first_of_turn: bool = True
    cut: int | None = None  # the caller stopped here (it yielded)
    fade: int = 0  # samples before ``cut`` over which it faded out
    transcript: str = ""  # what the agent's ASR made of the turn (first piece only)

    @property
    def end(self) -> int:
        full = self.start + self.length
        return full if self.cut is None else min(full, self.cut)

    @property
    def sound_end(self) -> int:
        """Where the piece's sound ends: after its speech, the ring-out its samples carry
        beyond ``length`` (a reverberant room), unless the caller cut it short."""
        if self.samples is None or self.cut is not None:
            return self.end
        return self.start + max(self.length, self.samples.size)

    def gained(self, s: int, e: int) -> Samples:
        """The piece's samples over line samples ``[s, e)``, faded out before a cut."""
        assert self.samples is not None
        out = self.samples[s - self.start : e - self.start]
        if self.cut is None or self.fade <= 0 or e <= self.cut - self.fade:
            return out
        pos = np.arange(s, e) - (self.cut - self.fade)
        ramp = np.where(pos < 0, 1.0, 0.5 + 0.5 * np.cos(np.pi * (pos + 1) / self.fade))
        return (out * ramp).astype(np.float32)

    def word_ends(self) -> list[tuple[int, str]]:
        """(sample where it ends, word) for each word said before the piece ended (text
        mode: words evenly spaced over the piece, as ``spoken_text`` cuts them)."""
        words = PAUSE_MARKER.sub(" ", self.text).split()
        n = len(words)
        if n == 0 or self.length <= 0:
            return []
        ends = [(self.start + math.ceil(self.length * (i + 1) / n), w) for i, w in enumerate(words)]
        said = len(self.spoken_text().split()) if self.cut is not None else n
        return ends[:said]

    def spoken_text(self) -> str:
        if self.cut is None or self.length <= 0:
            return self.text
        return words_spoken(self.text, (self.end - self.start) / self.length)


@dataclass
class CallerLine:
    mode: Literal["audio", "text"]
    frame_len: int
    rate: int
    effects: list[LineEffect] = field(default_factory=list)
    pieces: list[LinePiece] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._live: list[LinePiece] = []
        self._track = np.zeros(0, np.float32)

    def add(self, piece: LinePiece) -> None:
        self.pieces.append(piece)
        self._live.append(piece)

    def cut(self, at: int, fade: int = 0) -> list[LinePiece]:
        """The caller stops at sample ``at``: pieces still to come are dropped, a piece under
        way fades out over the next ``fade`` samples and ends there. Returns the pieces that
        were cut short."""
        cut: list[LinePiece] = []
        for p in list(self._live):
            if p.backchannel or p.end <= at:
                continue
            if p.start >= at:
                self.pieces.remove(p)
                self._live.remove(p)
            else:
                p.cut = min(at + fade, p.start + p.length)
                p.fade = p.cut - at
                cut.append(p)
        return cut

    def quiet(self) -> bool:
        """Does an empty stretch of line stay empty (no effect adds sound)?"""
        return all(e.keeps_silence for e in self.effects)

    def boundaries_after(self, sample: int) -> list[int]:
        """Starts and ends of pieces after ``sample`` (where the line changes)."""
        out = []
        for p in self._live:
            out += [s for s in (p.start, p.end, p.sound_end) if s > sample]
        return out

    def block(
        self, k0: int, frames: int
    ) -> tuple[Samples | None, npt.NDArray[np.bool_] | None, dict[int, str]]:
        """The line over frames ``[k0, k0 + frames)``: (samples or None when empty, per-frame
        speech flags in text mode, words finished per frame in text mode)."""
        a, b = k0 * self.frame_len, (k0 + frames) * self.frame_len
        self._live = [p for p in self._live if p.sound_end > a or p.start >= a]
        hits = [p for p in self._live if p.start < b and p.sound_end > a]
        if self.mode == "text":
            if not hits:
                return None, None, {}
            flags = np.zeros(frames, bool)
            words: dict[int, str] = {}
            for p in hits:
                f0 = max(0, p.start // self.frame_len - k0)
                f1 = min(frames, math.ceil(p.end / self.frame_len) - k0)
                flags[f0:f1] = True
                # each word arrives in the frame where it ends (words evenly spaced), so a
                # listener can count the words of speech still under way
                for at, word in p.word_ends():
                    frame = (at - 1) // self.frame_len
                    if k0 <= frame < k0 + frames:
                        words[frame] = f"{words[frame]} {word}" if frame in words else word
            return None, flags, words
        if not hits and self.quiet():
            return None, None, {}
        out = np.zeros(b - a, np.float32)
        for p in hits:
            if p.samples is None:
                continue
            s, e = max(a, p.start), min(b, p.sound_end)
            out[s - a : e - a] += p.gained(s, e)
        for effect in self.effects:
            out = effect.apply(out, a, self.rate)
        return out, None, {}

    def record(self, k0: int, frames: int, samples: Samples | None) -> None:
        """The agent took in these frames: they are part of ``user.wav``."""
        if samples is None or frames <= 0:
            return
        a = k0 * self.frame_len
        data = samples[: frames * self.frame_len]
        if self._track.size < a + data.size:
            grow = max(a + data.size, 2 * self._track.size)
            self._track = np.concatenate(
                [self._track, np.zeros(grow - self._track.size, np.float32)]
            )
        self._track[a : a + data.size] = data

    def track(self, length_s: float) -> Audio:
        n = round(length_s * self.rate)
        data = self._track[:n]
        return Audio(np.pad(data, (0, n - data.size)), self.rate, "<line:user>")
