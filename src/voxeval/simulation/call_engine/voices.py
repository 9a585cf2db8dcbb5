"""The voices of a call: the caller's turns placed on its line as speech (rendered and
perturbed in audio mode, timed by word count in text mode) and the agent's replies as
utterances."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from voxeval.audio import Audio, rms
from voxeval.errors import ConfigError, HarnessFault
from voxeval.simulation.bus import to_rate
from voxeval.simulation.call_engine.agent_speech import open_utterance
from voxeval.simulation.call_engine.compute import CallCompute, ours
from voxeval.simulation.call_engine.frames import FrameGrid
from voxeval.simulation.caller_behaviour import SpeakingPlan
from voxeval.simulation.line import CallerLine, LinePiece
from voxeval.simulation.parties import AgentTurn, CallerTurn
from voxeval.simulation.turn_detection import TurnDetector, Utterance

Renderer = Callable[[str], Audio]
AudioTransform = Callable[[Audio], Audio]


class CallVoices:
    """Turns the parties' words into what the line carries (``mode``: audio or text)."""

    def __init__(
        self,
        mode: str,
        grid: FrameGrid,
        line: CallerLine,
        detector: TurnDetector,
        compute: CallCompute,
        *,
        words_per_s: float,
        caller_voice: Renderer | None,
        agent_voice: Renderer | None,
        caller_transform: AudioTransform | None,
    ) -> None:
        self.mode, self.grid, self.line, self.detector = mode, grid, line, detector
        self.compute = compute
        self.words_per_s = words_per_s
        self.caller_voice, self.agent_voice = caller_voice, agent_voice
        self.caller_transform = caller_transform

    def caller_pieces(
        self,
        turn: CallerTurn,
        start: int,
        index: int,
        backchannel: bool,
        rate_factor: float,
        speaking_plan: Callable[[str], SpeakingPlan],
    ) -> list[LinePiece]:
        """The caller's ``turn`` as line pieces from ``start`` (its speaking plan), added to
        the line."""
        if turn.audio is not None and self.mode == "audio":
            parts: list[tuple[str, float]] = [(turn.text, 0.0)]
        else:
            plan = speaking_plan(turn.text)
            pauses = (*plan.pauses_s, 0.0)
            parts = list(zip(plan.pieces, pauses, strict=True))
        t = start
        placed: list[LinePiece] = []
        for n, (text, pause) in enumerate(parts):
            if self.mode == "text":
                words = max(1, len(text.split()))
                length = self.grid.samples(words / (self.words_per_s * rate_factor))
                piece = LinePiece(t, length, text, index, None, backchannel, n == 0)
            else:
                rendered = self.caller_audio(turn if len(parts) == 1 else None, text)
                if rendered is None:
                    continue
                samples, length = rendered
                piece = LinePiece(t, length, text, index, samples, backchannel, n == 0)
            placed.append(piece)
            t = piece.start + piece.length + self.grid.samples(pause)
        if not placed:
            raise HarnessFault(
                f"the caller's turn contains no speech: {turn.text!r}",
                component="renderer" if self.mode == "audio" else "simulator",
            )
        for piece in placed:
            self.line.add(piece)
        return placed

    def caller_audio(self, turn: CallerTurn | None, text: str) -> tuple[np.ndarray, int] | None:
        """The caller's utterance as the line carries it, and how long its speech lasts: a
        perturbation may leave a tail after the speech (a room's ring-out), which plays on."""
        laned = self.compute.laned
        audio = turn.audio if turn is not None else None
        if audio is None:
            if self.caller_voice is None:
                raise ConfigError("audio mode needs a caller voice (simulation.caller_voice)")
            audio = ours("renderer", "caller voice", laned, self.caller_voice, text)
        clean = laned(self.detector.from_audio, to_rate(audio), text)
        if clean.audio is None or clean.duration <= 0:
            return None
        heard = clean.audio
        if self.caller_transform is not None:
            perturbed = ours(
                "perturbation", "caller transform", laned, self.caller_transform, heard
            )
            heard = to_rate(perturbed)
        samples = heard.samples.astype(np.float32)
        for effect in self.line.effects:
            effect.calibrate(rms(clean.audio))
        return samples, min(samples.size, clean.audio.num_samples)

    def agent_utterance(self, turn: AgentTurn) -> tuple[Utterance | None, bool]:
        """The agent's speech, and whether we rendered it from the agent's text (a text-only
        agent: its latency then includes the declared rendering model, not our time)."""
        laned = self.compute.laned
        text = (turn.text or "").strip()
        if self.mode == "text":
            return (self.detector.from_text(text) if text else None), False
        if turn.audio is not None and turn.open:  # placed as it arrives, more to come
            return open_utterance(to_rate(turn.audio), text), False
        if turn.audio is not None:
            utt = laned(self.detector.from_audio, to_rate(turn.audio), text)
            return (utt if utt.chunks else None), False
        if not text:
            return None, False
        if self.agent_voice is None:
            raise ConfigError("audio mode needs an agent voice (simulation.agent_voice)")
        audio = ours("renderer", "agent voice", laned, self.agent_voice, text)
        utt = laned(self.detector.from_audio, to_rate(audio), text)
        return (utt if utt.chunks else None), True

    def calibrate(self, opening: CallerTurn, speaking_plan: Callable[[str], SpeakingPlan]) -> None:
        """Set the level of SNR-defined line effects from the caller's opening line."""
        if opening.audio is not None:
            level = rms(to_rate(opening.audio))
        else:
            if self.caller_voice is None:
                raise ConfigError("audio mode needs a caller voice (simulation.caller_voice)")
            text = speaking_plan(opening.text).text
            laned = self.compute.laned
            audio = ours("renderer", "caller voice", laned, self.caller_voice, text)
            trimmed = laned(self.detector.from_audio, to_rate(audio), text).audio
            level = rms(trimmed) if trimmed is not None and trimmed.num_samples else 0.1
        for effect in self.line.effects:
            effect.calibrate(level)
