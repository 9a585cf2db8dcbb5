"""The caller's side of a WebRTC call (aiortc), run on its own asyncio loop in a thread.

Signalling is one HTTP POST, as Pipecat's small WebRTC transport expects (its runner serves
``POST /api/offer``): voxeval sends ``{"sdp", "type": "offer", "pc_id": null, "restart_pc":
false, "request_data": {...}}`` and the agent answers ``{"sdp", "type": "answer", "pc_id"}``.
ICE candidates go inside the SDP (aiortc gathers them before the offer leaves), so no
trickle ``PATCH`` is needed.

Outgoing: a paced audio track, one 20 ms packet per slot. Frame ``k`` of the call's line is
sent once ``t0 + (k + 1) * frame_s`` has come (once it has been captured). When the engine
hands frames over late (it waits while it takes in a reply), they go out in order as soon as
possible and silent ones are skipped until the wire has caught up (``skipped_frames``), so no
caller speech is lost; speech handed over late reaches the agent that much late.
Incoming: the agent's audio, mono at ``rate``, each decoded chunk with the
monotonic time it arrived, on a thread-safe queue; ``"closed"``/``"failed"`` items when the
track ends or the connection fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import fractions
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from voxeval.errors import SystemFault
from voxeval.json_types import JSONObject

if TYPE_CHECKING:
    import httpx
    from aiortc import MediaStreamTrack, RTCPeerConnection
    from av import AudioFrame


@dataclass(frozen=True)
class Incoming:
    """What arrived from the agent: ``audio`` (float32 mono) or a connection ``event``."""

    at: float  # time.monotonic() of arrival
    event: str  # "audio", "closed" (the agent ended its track) or "failed"
    samples: npt.NDArray[np.float32] | None = None


class WebRTCPeer:
    """One WebRTC connection to an agent's offer endpoint."""

    def __init__(self, url: str, *, rate: int = 16000, frame_s: float = 0.02) -> None:
        self.url = url
        self.rate = rate
        self.frame_s = frame_s
        self.incoming: queue.Queue[Incoming] = queue.Queue()
        self.t0: float | None = None  # monotonic time of the line's frame 0
        self.skipped_frames = 0
        self.pc_id: str | None = None
        self._frames: dict[int, npt.NDArray[np.float32] | None] = {}
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._pc: RTCPeerConnection | None = None
        self._tasks: list[asyncio.Task[None]] = []

    # ---------------------------------------------------------------- engine thread
    def connect(self, request_data: JSONObject, timeout_s: float) -> None:
        """Offer, get the answer, and wait until media flows both ways."""
        future = asyncio.run_coroutine_threadsafe(self._connect(request_data), self._loop)
        try:
            future.result(timeout_s)
        except TimeoutError as exc:
            future.cancel()
            raise SystemFault(
                f"webrtc: no connection to {self.url} within {timeout_s:g} s", cause="timeout"
            ) from exc

    def start_line(self, t0: float) -> None:
        self.t0 = t0

    def put(self, frame: int, samples: npt.NDArray[np.float32] | None) -> None:
        """Hand over the caller line's frame ``frame`` (None: digital silence)."""
        with self._lock:
            self._frames[frame] = samples

    def next_frame(self, cursor: int, behind: int) -> tuple[int, npt.NDArray[np.float32] | None]:
        """What goes out in the next packet: ``(new cursor, samples or None for silence)``.
        ``behind``: how many frames the wire is behind the line's clock; while behind, frames
        already handed over that are silent are skipped (counted in ``skipped_frames``), so
        the wire catches up without losing speech. A frame not handed over yet is waited for
        (silence goes out meanwhile)."""
        with self._lock:
            while behind > 0 and cursor in self._frames and _silent(self._frames[cursor]):
                del self._frames[cursor]
                cursor += 1
                behind -= 1
                self.skipped_frames += 1
            if cursor not in self._frames:
                return cursor, None
            return cursor + 1, self._frames.pop(cursor)

    def next(self, deadline: float) -> Incoming | None:
        """The next thing from the agent, or None once ``deadline`` (monotonic) passes."""
        wait = deadline - time.monotonic()
        try:
            return (
                self.incoming.get(timeout=max(0.0, wait))
                if wait > 0
                else self.incoming.get_nowait()
            )
        except queue.Empty:
            return None

    def close(self) -> None:
        if self._loop.is_closed():
            return
        future = asyncio.run_coroutine_threadsafe(self._close(), self._loop)
        # closing is best effort: the call's result is already made
        with contextlib.suppress(Exception):
            future.result(5.0)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5.0)
        if not self._loop.is_running():
            self._loop.close()

    # ---------------------------------------------------------------- loop thread
    async def _connect(self, request_data: JSONObject) -> None:
        import httpx
        from aiortc import RTCPeerConnection, RTCSessionDescription

        pc = RTCPeerConnection()
        self._pc = pc
        track_arrived = asyncio.Event()
        connected = asyncio.Event()

        @pc.on("track")
        def on_track(track: MediaStreamTrack) -> None:
            if track.kind == "audio":
                self._tasks.append(asyncio.ensure_future(self._read(track)))
                track_arrived.set()

        @pc.on("connectionstatechange")
        async def on_state() -> None:
            if pc.connectionState == "connected":
                connected.set()
            elif pc.connectionState in ("failed", "closed") and self.t0 is not None:
                self.incoming.put(Incoming(time.monotonic(), pc.connectionState))

        pc.addTrack(_CallerTrack(self))
        await pc.setLocalDescription(await pc.createOffer())
        offer = {
            "sdp": pc.localDescription.sdp,
            "type": pc.localDescription.type,
            "pc_id": None,
            "restart_pc": False,
            "request_data": request_data,
        }
        async with httpx.AsyncClient() as client:
            response = await client.post(self.url, json=offer)
        if response.status_code != 200:
            raise SystemFault(
                f"webrtc: {self.url} answered the offer with HTTP {response.status_code}: "
                f"{response.text[:200]}",
                cause="malformed_output",
            )
        answer = _answer(response, self.url)
        pc_id, sdp = answer.get("pc_id"), answer["sdp"]
        self.pc_id = pc_id if isinstance(pc_id, str) else None
        assert isinstance(sdp, str)  # checked by _answer
        await pc.setRemoteDescription(RTCSessionDescription(sdp=sdp, type="answer"))
        await connected.wait()
        await track_arrived.wait()

    async def _read(self, track: MediaStreamTrack) -> None:
        import av
        from aiortc.mediastreams import MediaStreamError

        resampler = av.AudioResampler(format="s16", layout="mono", rate=self.rate)
        while True:
            try:
                frame = await track.recv()
                assert isinstance(frame, av.AudioFrame)  # an audio track's frames

            except MediaStreamError:
                if self.t0 is not None:
                    self.incoming.put(Incoming(time.monotonic(), "closed"))
                return
            if self.t0 is None:
                continue  # before the call's time 0 (the agent's start-up noise)
            arrived = time.monotonic()
            for out in resampler.resample(frame):
                pcm = out.to_ndarray().reshape(-1).astype(np.float32) / 32768.0
                self.incoming.put(Incoming(arrived, "audio", pcm))

    async def _close(self) -> None:
        for task in self._tasks:
            task.cancel()
        if self._pc is not None:
            await self._pc.close()


def _silent(samples: npt.NDArray[np.float32] | None) -> bool:
    """Digital silence or quieter than -50 dBFS: safe to skip when catching up."""
    return samples is None or float(np.sqrt(np.mean(np.square(samples)))) < 0.003


def _answer(response: httpx.Response, url: str) -> JSONObject:
    """The answer's JSON, checked: an agent that breaks the protocol fails the call."""
    try:
        answer = response.json()
    except ValueError as exc:
        raise SystemFault(
            f"webrtc: {url} answered the offer with invalid JSON", cause="malformed_output"
        ) from exc
    if not isinstance(answer, dict) or answer.get("type") != "answer":
        raise SystemFault(
            f"webrtc: {url}: the reply needs 'type': 'answer', got {answer!r:.200}",
            cause="malformed_output",
        )
    sdp = answer.get("sdp")
    if not isinstance(sdp, str) or not sdp.startswith("v=0"):
        raise SystemFault(
            f"webrtc: {url}: the reply's 'sdp' is not an SDP", cause="malformed_output"
        )
    checked: JSONObject = answer
    return checked


def _caller_track_class() -> Callable[[WebRTCPeer], MediaStreamTrack]:
    from aiortc import MediaStreamTrack

    class CallerTrack(MediaStreamTrack):
        """The caller's line as a paced audio track (one frame per slot, see the module)."""

        kind = "audio"

        def __init__(self, peer: WebRTCPeer) -> None:
            super().__init__()
            self.peer = peer
            self.sent = 0  # samples sent (the pts)
            self.next_frame = 0  # the line's next frame to send
            self.started: float | None = None  # the first packet's time (pacing)

        async def recv(self) -> AudioFrame:
            import av

            peer = self.peer
            size = round(peer.rate * peer.frame_s)
            samples: npt.NDArray[np.float32] | None = None
            # one packet per slot on the track's own schedule (never faster)
            self.started = self.started or time.monotonic()
            due = self.started + self.sent / peer.rate + peer.frame_s
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            if peer.t0 is not None:  # the line's frames, from the first one captured
                captured = int((time.monotonic() - peer.t0) / peer.frame_s)
                behind = captured - 1 - self.next_frame
                if behind >= 0:
                    self.next_frame, samples = peer.next_frame(self.next_frame, behind)
            pcm = np.zeros(size, np.int16)
            if samples is not None:
                clipped = np.clip(samples[:size], -1.0, 1.0)
                pcm[: len(clipped)] = np.round(clipped * 32767).astype(np.int16)
            frame = av.AudioFrame.from_ndarray(pcm.reshape(1, -1), format="s16", layout="mono")
            frame.sample_rate = peer.rate
            frame.pts = self.sent
            frame.time_base = fractions.Fraction(1, peer.rate)
            self.sent += size
            return frame

    return CallerTrack


def _CallerTrack(peer: WebRTCPeer) -> MediaStreamTrack:
    return _caller_track_class()(peer)
