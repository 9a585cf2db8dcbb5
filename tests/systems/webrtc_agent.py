"""A minimal voice agent that listens on WebRTC (aiortc) behind Pipecat's offer endpoint shape
(``POST /api/offer`` with ``{sdp, type, pc_id, ...}`` -> ``{sdp, type: answer, pc_id}``),
on 127.0.0.1, for the webrtc system's tests.

It greets with a tone, then answers each caller turn (speech followed by ``endpoint_s`` of
quiet on its incoming track) with a tone of the next length in ``replies_s``; after the last
reply it hangs up (stops its track) when ``hang_up`` is set; with ``stops_on_speech`` it
stops talking (drops what it has not sent yet) when it hears the caller while it speaks, as
a bot with barge-in does. ``fault`` breaks the protocol:
``http_500`` (the offer is refused), ``not_json``, ``no_answer`` (JSON without an SDP).
"""

from __future__ import annotations

import asyncio
import fractions
import math
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from aiohttp import web
from aiortc import MediaStreamTrack, RTCPeerConnection, RTCSessionDescription

RATE = 16000
FRAME = 320  # 20 ms


@dataclass
class Script:
    greeting_s: float | None = 0.8
    replies_s: list[float] = field(default_factory=lambda: [0.8])
    endpoint_s: float = 0.4
    hang_up: bool = False
    stops_on_speech: bool = False
    fault: str | None = None


@dataclass
class Seen:
    offers: list[dict[str, Any]] = field(default_factory=list)
    caller_frames: int = 0
    caller_s: float = 0.0  # seconds of caller audio received
    loud_frames: int = 0
    replies_sent: list[float] = field(default_factory=list)  # monotonic times
    dropped_s: list[float] = field(default_factory=list)  # speech left unsaid on a barge-in


class AgentTrack(MediaStreamTrack):
    """Paced 20 ms frames: queued tone samples, else silence (as a deployed bot sends)."""

    kind = "audio"

    def __init__(self) -> None:
        super().__init__()
        self.pending = np.zeros(0, np.float32)
        self.sent = 0
        self.t0: float | None = None
        self.on_first: list[float] = []  # reply start marks filled when their audio leaves
        self.marks: list[int] = []  # sample positions in pending where a reply begins

    def say(self, seconds: float) -> None:
        t = np.arange(int(seconds * RATE)) / RATE
        tone = (0.3 * np.sin(2 * math.pi * 440 * t)).astype(np.float32)
        self.marks.append(len(self.pending))
        self.pending = np.concatenate([self.pending, tone])

    async def recv(self) -> Any:
        import av

        if self.t0 is None:
            self.t0 = time.monotonic()
        wait = self.t0 + self.sent / RATE - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        chunk = np.zeros(FRAME, np.float32)
        if len(self.pending):
            if self.marks and self.marks[0] == 0:
                self.on_first.append(time.monotonic())
                self.marks.pop(0)
            take = self.pending[:FRAME]
            chunk[: len(take)] = take
            self.pending = self.pending[FRAME:]
            self.marks = [m - FRAME for m in self.marks]
        pcm = np.round(chunk * 32767).astype(np.int16).reshape(1, -1)
        frame = av.AudioFrame.from_ndarray(pcm, format="s16", layout="mono")
        frame.sample_rate = RATE
        frame.pts = self.sent
        frame.time_base = fractions.Fraction(1, RATE)
        self.sent += FRAME
        return frame


class WebRTCTestAgent:
    """Serves the offer endpoint on 127.0.0.1 from its own loop thread (a context manager)."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.seen = Seen()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.pcs: list[RTCPeerConnection] = []
        self.tracks: list[AgentTrack] = []
        self.listeners: list[asyncio.Future[None]] = []
        self.url = ""

    def __enter__(self) -> WebRTCTestAgent:
        self.thread.start()
        port = asyncio.run_coroutine_threadsafe(self._serve(), self.loop).result(10)
        self.url = f"http://127.0.0.1:{port}/api/offer"
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

    async def _serve(self) -> int:
        app = web.Application()
        app.router.add_post("/api/offer", self._offer)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        return int(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]

    async def _stop(self) -> None:
        for pc in self.pcs:
            await pc.close()
        await self.runner.cleanup()

    async def _offer(self, request: web.Request) -> web.Response:
        fault = self.script.fault
        if fault == "http_500":
            return web.Response(status=500, text="bot crashed")
        if fault == "not_json":
            return web.Response(text="<html>hello</html>")
        body = await request.json()
        self.seen.offers.append(body)
        if fault == "no_answer":
            return web.json_response({"type": "answer", "pc_id": "x"})
        pc = RTCPeerConnection()
        self.pcs.append(pc)
        out = AgentTrack()
        self.tracks.append(out)
        pc.addTrack(out)

        @pc.on("track")
        def on_track(track: Any) -> None:
            self.listeners.append(asyncio.ensure_future(self._listen(track, out)))

        await pc.setRemoteDescription(RTCSessionDescription(sdp=body["sdp"], type=body["type"]))
        await pc.setLocalDescription(await pc.createAnswer())
        if self.script.greeting_s:
            out.say(self.script.greeting_s)
        answer = {"sdp": pc.localDescription.sdp, "type": "answer", "pc_id": uuid.uuid4().hex}
        return web.json_response(answer)

    async def _listen(self, track: Any, out: AgentTrack) -> None:
        """Endpoint caller turns by level and answer each one."""
        import av

        resampler = av.AudioResampler(format="s16", layout="mono", rate=RATE)
        replies = list(self.script.replies_s)
        speaking, quiet = False, 0.0
        while True:
            try:
                frame = await track.recv()
            except Exception:
                return
            for f in resampler.resample(frame):
                pcm = f.to_ndarray().reshape(-1).astype(np.float32) / 32768
                self.seen.caller_frames += 1
                self.seen.caller_s += len(pcm) / RATE
                loud = float(np.sqrt(np.mean(pcm**2))) > 0.02
                if loud:
                    self.seen.loud_frames += 1
                    speaking, quiet = True, 0.0
                    if self.script.stops_on_speech and len(out.pending):  # barged in on
                        self.seen.dropped_s.append(len(out.pending) / RATE)
                        out.pending = np.zeros(0, np.float32)
                        out.marks = []
                elif speaking:
                    quiet += len(pcm) / RATE
                    if quiet >= self.script.endpoint_s and len(out.pending) == 0:
                        speaking = False
                        if replies:
                            out.say(replies.pop(0))
                        elif self.script.hang_up:  # as a Pipecat bot whose pipeline ended
                            await self.pcs[-1].close()
                            return

    def reply_times(self) -> list[float]:
        return [t for track in self.tracks for t in track.on_first]
