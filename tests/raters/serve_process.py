"""`voxeval raters serve` in a subprocess on a free 127.0.0.1 port, for tests that need the
real server (restart, load)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]


def server_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT), env.get("PYTHONPATH", "")])
    return env


def serve(
    study: Path, port: int, db: str | None = None, *, log: Path, wait_s: float = 30.0
) -> tuple[subprocess.Popen[str], str]:
    """Start the server (stderr to ``log``: a pipe nobody reads could fill and stall it);
    returns the process and its URL once /healthz answers."""
    command = [sys.executable, "-m", "voxeval", "raters", "serve", str(study), "--port",
               str(port), "--progress-every", "0"]  # fmt: skip
    if db is not None:
        command += ["--db", db]
    with log.open("w") as errors:  # the child keeps its own copy of the descriptor
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=errors, text=True, env=server_env()
        )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    assert url == f"http://127.0.0.1:{port}/", url
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "healthz", timeout=1).status_code == 200:
                return process, url
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise AssertionError("the server did not come up: " + log.read_text())
