"""A Pipecat bot behind Pipecat's own small WebRTC signalling (``SmallWebRTCRequestHandler``
and ``SmallWebRTCTransport``) on 127.0.0.1: its pipeline plays back each caller turn once the
caller has finished (louder), so the test needs no models. The offer endpoint is
``POST /api/offer`` as in Pipecat's runner."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import numpy as np
from aiohttp import web
from pipecat.frames.frames import Frame, InputAudioRawFrame, OutputAudioRawFrame
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineWorker
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.transports.base_transport import TransportParams
from pipecat.transports.smallwebrtc.request_handler import (
    SmallWebRTCRequest,
    SmallWebRTCRequestHandler,
)
from pipecat.transports.smallwebrtc.transport import SmallWebRTCTransport
from pipecat.workers.runner import WorkerRunner


class Echo(FrameProcessor):
    """Takes turns like a bot: after the caller's speech and 0.4 s of quiet, plays back what
    the caller said (doubled in level) as its reply."""

    def __init__(self) -> None:
        super().__init__()
        self.heard_frames = 0
        self.replies = 0
        self._speech: list[np.ndarray] = []
        self._quiet_s = 0.0

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if not isinstance(frame, InputAudioRawFrame):
            await self.push_frame(frame, direction)
            return
        self.heard_frames += 1
        pcm = np.frombuffer(frame.audio, np.int16)
        if np.sqrt(np.mean((pcm / 32768.0) ** 2)) > 0.02:
            self._speech.append(pcm)
            self._quiet_s = 0.0
        elif self._speech:
            self._quiet_s += len(pcm) / frame.sample_rate
            if self._quiet_s >= 0.4:
                said = np.concatenate(self._speech).astype(np.int32) * 2
                self._speech = []
                self.replies += 1
                audio = np.clip(said, -32768, 32767).astype(np.int16).tobytes()
                await self.push_frame(
                    OutputAudioRawFrame(audio=audio, sample_rate=frame.sample_rate, num_channels=1)
                )


class PipecatEchoBot:
    """Serves the offer endpoint from its own loop thread (a context manager)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.echoes: list[Echo] = []
        self.runs: list[asyncio.Future[None]] = []
        self.workers: list[PipelineWorker] = []
        self.url = ""

    def __enter__(self) -> PipecatEchoBot:
        self.thread.start()
        port = asyncio.run_coroutine_threadsafe(self._serve(), self.loop).result(10)
        self.url = f"http://127.0.0.1:{port}/api/offer"
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self.loop).result(20)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

    async def _serve(self) -> int:
        self.handler = SmallWebRTCRequestHandler()
        app = web.Application()
        app.router.add_post("/api/offer", self._offer)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        return int(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]

    async def _stop(self) -> None:
        for worker in self.workers:
            await worker.cancel()
        await asyncio.wait(self.runs, timeout=10)
        await self.handler.close()
        await self.runner.cleanup()

    async def _offer(self, request: web.Request) -> web.Response:
        body = await request.json()
        answer = await self.handler.handle_web_request(
            request=SmallWebRTCRequest.from_dict(body),
            webrtc_connection_callback=self._bot,
        )
        return web.json_response(answer)

    async def _bot(self, connection: Any) -> None:
        transport = SmallWebRTCTransport(
            webrtc_connection=connection,
            params=TransportParams(audio_in_enabled=True, audio_out_enabled=True),
        )
        echo = Echo()
        self.echoes.append(echo)
        worker = PipelineWorker(Pipeline([transport.input(), echo, transport.output()]))
        runner = WorkerRunner(handle_sigint=False)
        await runner.add_workers(worker)
        self.workers.append(worker)
        self.runs.append(asyncio.ensure_future(runner.run()))
