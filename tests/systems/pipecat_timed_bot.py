"""A model-free Pipecat bot for the virtual-clock tests: after the caller's speech and
``wait_s`` of quiet (an asyncio timer, as Pipecat's turn strategies use) it "thinks" for
``think_s`` of real time in a thread (as a model's inference) and answers with a 1 s tone."""

from __future__ import annotations

import asyncio
import time

import numpy as np
from pipecat.frames.frames import Frame, InputAudioRawFrame, OutputAudioRawFrame
from pipecat.pipeline.pipeline import Pipeline
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.transports.base_transport import BaseTransport

RATE = 16000


class TimedReplies(FrameProcessor):
    def __init__(self, wait_s: float, think_s: float) -> None:
        super().__init__()
        self.wait_s, self.think_s = wait_s, think_s
        self._heard = False
        self._timer: asyncio.Task[None] | None = None

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if not isinstance(frame, InputAudioRawFrame):
            await self.push_frame(frame, direction)
            return
        pcm = np.frombuffer(frame.audio, np.int16) / 32768.0
        if np.sqrt(np.mean(pcm**2)) > 0.02:  # the caller speaks: no answer yet
            self._heard = True
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        elif self._heard and self._timer is None:
            self._timer = asyncio.ensure_future(self._answer())

    async def _answer(self) -> None:
        await asyncio.sleep(self.wait_s)
        self._heard, self._timer = False, None
        await asyncio.to_thread(time.sleep, self.think_s)  # real compute, in a thread
        t = np.arange(RATE) / RATE
        tone = (0.3 * np.sin(2 * np.pi * 440 * t) * 32767).astype(np.int16).tobytes()
        await self.push_frame(OutputAudioRawFrame(audio=tone, sample_rate=RATE, num_channels=1))


def build(transport: BaseTransport, *, wait_s: float = 0.3, think_s: float = 0.5) -> Pipeline:
    return Pipeline([transport.input(), TimedReplies(wait_s, think_s), transport.output()])
