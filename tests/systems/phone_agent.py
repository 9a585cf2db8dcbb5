"""A minimal phone-line agent for the tests: a websockets server on 127.0.0.1 that takes a call
through the Twilio Media Streams protocol with Pipecat's own serializer
(``pipecat.serializers.twilio.TwilioFrameSerializer``), as a Pipecat bot behind a telephony
provider would. It greets, detects the end of each caller turn by energy, calls the scenario
tools over MCP with the token from ``customParameters`` and answers with a tone; it sends a
mark after each reply and ``clear`` when the caller talks over it. By default it does not
listen while it sends a reply (its receive loop waits); with ``listen_while_speaking`` it
sends replies from a task of their own, as Pipecat's transport does, and stops sending when it
clears."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np
from websockets.asyncio.server import ServerConnection, serve

RATE = 16000
FRAME = 320  # 20 ms at 16 kHz


def tone(seconds: float, hz: float) -> bytes:
    t = np.arange(int(seconds * RATE)) / RATE
    return (0.3 * np.sin(2 * np.pi * hz * t) * 32767).astype(np.int16).tobytes()


@dataclass
class Script:
    greeting_s: float | None = 1.0
    replies_s: list[float] = field(default_factory=lambda: [1.0, 1.0])
    tools: dict[int, list[tuple[str, dict[str, Any]]]] = field(default_factory=dict)
    eot_frames: int = 20  # 400 ms of quiet after speech ends the caller's turn
    yield_after_frames: int | None = None  # caller speech over a reply that makes it clear
    fault: str | None = None  # "invalid_json" or "drop" after the greeting
    hang_up: bool = False  # close the stream normally once the last reply has played
    listen_while_speaking: bool = False  # send replies from a task; stop sending on clear


@dataclass
class Seen:
    events: list[str] = field(default_factory=list)
    custom: dict[str, str] = field(default_factory=dict)
    marks_back: list[str] = field(default_factory=list)
    caller_frames: int = 0
    caller_rates: set[int] = field(default_factory=set)
    tool_results: list[Any] = field(default_factory=list)
    cleared: int = 0
    replies_sent: list[float] = field(default_factory=list)  # monotonic, first chunk
    unsent_s: list[float] = field(default_factory=list)  # reply audio not sent on a clear
    t0: float = 0.0  # the stream's start on the same clock (set by the test)


class PhoneAgent:
    """Runs the server in its own thread and event loop; ``url`` once started."""

    def __init__(self, script: Script) -> None:
        self.script, self.seen = script, Seen()
        self.url = ""
        self._ready = threading.Event()
        self._stop: asyncio.Future[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)

    def __enter__(self) -> PhoneAgent:
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set_result, None)
        self._thread.join(10)

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = self._loop.create_future()
        async with serve(self._call, "127.0.0.1", 0) as server:
            port = next(iter(server.sockets)).getsockname()[1]
            self.url = f"ws://127.0.0.1:{port}/media"
            self._ready.set()
            await self._stop

    async def _call(self, ws: ServerConnection) -> None:
        from pipecat.frames.frames import (
            InterruptionFrame,
            OutputAudioRawFrame,
            OutputTransportMessageFrame,
        )
        from pipecat.serializers.twilio import TwilioFrameSerializer

        script, seen = self.script, self.seen
        connected = json.loads(await ws.recv())
        start = json.loads(await ws.recv())
        seen.events += [connected["event"], start["event"]]
        info = start["start"]
        seen.custom = dict(info["customParameters"])
        serializer = TwilioFrameSerializer(
            info["streamSid"],
            info["callSid"],
            params=TwilioFrameSerializer.InputParams(auto_hang_up=False, sample_rate=RATE),
        )
        await serializer.setup(SimpleNamespace(audio_in_sample_rate=RATE))  # type: ignore[arg-type]
        playing_until = 0.0
        loop = asyncio.get_running_loop()
        speaking: asyncio.Task[None] | None = None
        unsent = [0]  # bytes of the reply being sent that have not gone out yet

        async def say(pcm: bytes, mark: str) -> None:
            nonlocal playing_until
            first, started = True, loop.time()
            playing_until = started + len(pcm) / 2 / RATE
            # as Pipecat's websocket output does: 20 ms chunks at twice real time
            for k in range(0, len(pcm), FRAME * 2):
                unsent[0] = len(pcm) - k
                chunk = pcm[k : k + FRAME * 2]
                frame = OutputAudioRawFrame(audio=chunk, sample_rate=RATE, num_channels=1)
                out = await serializer.serialize(frame)
                if out is not None:  # the resampler may hold back the first piece
                    if first:
                        seen.replies_sent.append(time.monotonic())
                        first = False
                    await ws.send(out)
                await asyncio.sleep(0.01)
            message = {"event": "mark", "streamSid": info["streamSid"], "mark": {"name": mark}}
            await ws.send(await serializer.serialize(OutputTransportMessageFrame(message=message)))  # type: ignore[arg-type]
            playing_until = started + len(pcm) / 2 / RATE  # when the network has played it

        session = await self._tools(seen.custom)
        try:
            if script.greeting_s:
                await say(tone(script.greeting_s, 500), "greeting")
            if script.fault == "invalid_json":
                await ws.send("this is not json")
            if script.fault == "drop":
                ws.transport.abort()
                return
            turn = loud = quiet = over = 0
            pending = b""
            async for raw in ws:
                message = json.loads(raw)
                event = message["event"]
                if event == "mark":
                    seen.marks_back.append(message["mark"]["name"])
                    last = f"reply-{len(script.replies_s) - 1}"
                    if script.hang_up and message["mark"]["name"] == last:
                        await ws.close()  # a normal close: the bot hangs up
                        return
                    continue
                if event != "media":
                    seen.events.append(event)
                    continue
                frame = await serializer.deserialize(raw)
                if frame is None:
                    continue
                seen.caller_rates.add(frame.sample_rate)  # type: ignore[attr-defined]
                # the serializer's resampler hands audio over in pieces of ~100 ms: look at
                # it in 20 ms windows
                pending += frame.audio  # type: ignore[attr-defined]
                while len(pending) >= FRAME * 2:
                    window, pending = pending[: FRAME * 2], pending[FRAME * 2 :]
                    seen.caller_frames += 1
                    pcm = np.frombuffer(window, np.int16).astype(np.float32) / 32768
                    speech = float(np.sqrt(np.mean(pcm**2))) > 0.05
                    loud, quiet = (loud + 1, 0) if speech else (loud, quiet + 1)
                    talking = loop.time() < playing_until + 0.2  # our reply may be playing
                    if speech and talking and script.yield_after_frames is not None:
                        over += 1
                        if over == script.yield_after_frames:
                            if speaking is not None and not speaking.done():
                                speaking.cancel()  # stop sending the rest
                                seen.unsent_s.append(unsent[0] / 2 / RATE)
                            clear = await serializer.serialize(InterruptionFrame())
                            await ws.send(clear)  # type: ignore[arg-type]
                            seen.cleared += 1
                            playing_until = 0.0
                    if loud >= 5 and quiet >= script.eot_frames and turn < len(script.replies_s):
                        for name, arguments in script.tools.get(turn, []):
                            seen.tool_results.append(await session(name, arguments))
                        reply = say(tone(script.replies_s[turn], 700), f"reply-{turn}")
                        if script.listen_while_speaking:
                            speaking = asyncio.ensure_future(reply)
                        else:
                            await reply
                        turn, loud, quiet, over = turn + 1, 0, 0, 0
        finally:
            seen.events.append("closed")

    async def _tools(self, custom: dict[str, str]) -> Any:
        """Call the scenario tools over MCP (official client SDK) with the call's token."""
        import httpx2
        from mcp.client.session import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        async def call(name: str, arguments: dict[str, Any]) -> Any:
            headers = {"Authorization": f"Bearer {custom['voxeval_tools_token']}"}
            async with (
                httpx2.AsyncClient(headers=headers, timeout=30) as http,
                streamable_http_client(custom["voxeval_tools_mcp_url"], http_client=http) as io,
                ClientSession(io[0], io[1]) as mcp,
            ):
                await mcp.initialize()
                result = await mcp.call_tool(name, arguments)
                return json.loads(result.content[0].text)  # type: ignore[union-attr]

        return call
