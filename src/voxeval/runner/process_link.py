"""Messages between the driver and a worker process of ``executor: processes``.

A message is any picklable value, sent as a 4-byte length and its pickle over a Unix socket
(the two ends of a ``multiprocessing.Pipe``), read and written by asyncio streams: neither
side holds a thread to wait for the other. Threads other than the loop's send through
``send_threadsafe``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import socket
import struct
from multiprocessing.connection import Connection
from typing import Any

_LENGTH = struct.Struct("!I")


class Link:
    """One end of a driver-worker connection, on the running event loop."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._loop = asyncio.get_running_loop()

    def send(self, message: Any) -> None:
        """Queue ``message`` (on the loop's thread; the transport writes it out)."""
        if self._writer.is_closing():
            return  # the other end is gone: whoever waits on it learns from ``receive``
        payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        self._writer.write(_LENGTH.pack(len(payload)) + payload)

    def on_loop_thread(self) -> bool:
        """Whether the caller runs on the thread of the link's event loop."""
        try:
            return asyncio.get_running_loop() is self._loop
        except RuntimeError:
            return False

    def send_threadsafe(self, message: Any) -> None:
        """``send`` from any thread."""
        self._loop.call_soon_threadsafe(self.send, message)

    async def receive(self) -> Any | None:
        """The next message, or None once the other end has closed (or died)."""
        try:
            header = await self._reader.readexactly(_LENGTH.size)
            payload = await self._reader.readexactly(_LENGTH.unpack(header)[0])
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
        return pickle.loads(payload)

    async def drain_and_close(self) -> None:
        """Write out what is queued, then close (an end already gone is fine)."""
        with contextlib.suppress(ConnectionError):
            await self._writer.drain()
        self._writer.close()
        with contextlib.suppress(ConnectionError):
            await self._writer.wait_closed()


async def open_link(conn: Connection) -> Link:
    """A ``Link`` over ``conn`` (a duplex ``multiprocessing.Pipe`` end, which is a Unix
    socket); ``conn`` is closed, the link owns a duplicate of its descriptor."""
    sock = socket.socket(fileno=os.dup(conn.fileno()))
    conn.close()
    reader, writer = await asyncio.open_unix_connection(sock=sock, limit=2**24)
    return Link(reader, writer)
