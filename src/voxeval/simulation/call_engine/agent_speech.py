"""The agent's speech on the line: the utterance scheduled to start, the one playing, those
that left the line, and the assistant track they are written to (audio mode)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from voxeval.audio import Audio
from voxeval.simulation.bus import FADE_S, AudioBus, to_rate
from voxeval.simulation.call_engine.frames import FrameGrid
from voxeval.simulation.parties import AgentTurn
from voxeval.simulation.turn_detection import Chunk, Utterance, words_spoken
from voxeval.systems.call import MoreAudio


@dataclass(eq=False)
class Spoken:
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


def open_utterance(audio: Audio, text: str) -> Utterance:
    """A live agent's reply as it arrived: untrimmed (more audio follows its end)."""
    return Utterance(audio.duration, (Chunk(0.0, audio.duration),), audio, text)


class AgentSpeech:
    """What the agent says on the line, from scheduled (``pending``) through ``playing`` to
    done (``spoken``); ``bus``: the assistant track (None in text mode)."""

    def __init__(self, grid: FrameGrid, bus: AudioBus | None) -> None:
        self.grid = grid
        self.bus = bus
        self.spoken: list[Spoken] = []
        self.pending: Spoken | None = None
        self.playing: Spoken | None = None
        self.last_end = 0  # where the agent's last utterance (not a backchannel) ended

    def start_playing(self) -> Spoken:
        spoken = self.pending
        assert spoken is not None
        self.pending, self.playing = None, spoken
        return spoken

    def stop_playing(self, at: int, yielded: bool) -> Spoken:
        """The playing utterance leaves the line at ``at`` (``yielded``: the agent stopped
        before its end) and goes on the assistant track."""
        spoken = self.playing
        assert spoken is not None
        if yielded and (at < spoken.onset + spoken.length or spoken.open):
            spoken.stop = at  # its audio fades out over the last FADE_S before the stop
        spoken.open = False
        self.playing = None
        self.spoken.append(spoken)
        if not spoken.turn.backchannel:
            self.last_end = spoken.end
        if self.bus is not None and spoken.utterance.audio is not None:
            self.bus.write(
                "assistant",
                spoken.utterance.audio,
                self.grid.s(spoken.onset),
                self.grid.s(spoken.end),
                fade_s=FADE_S if spoken.stop is not None else 0.0,
            )
        return spoken

    def more_audio(self, more: MoreAudio) -> Spoken | None:
        """A live agent's open reply goes on (its audio right after what came before), or is
        complete; returns the playing reply when the agent stopped it (cut where its audio
        ended)."""
        spoken = next((s for s in (self.playing, self.pending) if s is not None and s.open), None)
        if spoken is None:
            return None  # already cut (the caller's line or a StopSpeaking closed it)
        if more.audio is not None and more.audio.num_samples:
            utt = spoken.utterance
            assert utt.audio is not None
            joined = np.concatenate([utt.audio.samples, to_rate(more.audio).samples])
            spoken.utterance = open_utterance(
                Audio(joined.astype(np.float32), utt.audio.rate, utt.audio.source), utt.text
            )
            spoken.length = self.grid.samples(spoken.utterance.duration)
        if not more.done:
            return None
        if spoken is self.playing and more.yielded:
            return spoken
        spoken.open = False  # it plays out to its end
        return None

    def on_line(self) -> list[Spoken]:
        """Every utterance that reached the line, the one still playing last."""
        spoken = list(self.spoken)
        if self.playing is not None:
            spoken.append(self.playing)
        return spoken

    def track(self, length: float) -> Audio | None:
        """The assistant track of ``length`` seconds (None in text mode)."""
        bus = self.bus
        if bus is None:
            return None
        p = self.playing
        if p is not None and p.utterance.audio is not None:
            bus.write("assistant", p.utterance.audio, self.grid.s(p.onset), self.grid.s(p.end))
        return bus.track("assistant", length)
