"""Start an ASGI app with uvicorn on a local port."""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING

from voxeval.errors import ConfigError

if TYPE_CHECKING:
    from starlette.types import ASGIApp


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago (for tests and ``--port 0``)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def serve(app: ASGIApp, host: str = "127.0.0.1", port: int = 8000, *, workers: int = 1) -> None:
    """Serve ``app`` until interrupted. Request lines are not logged: URLs can carry tokens."""
    try:
        import uvicorn
    except ImportError as exc:
        raise ConfigError("serving needs the 'web' extra: pip install 'voxeval[web]'") from exc
    uvicorn.run(app, host=host, port=port, access_log=False, log_level="warning", workers=workers)
