"""Slot use and framework overhead of single-turn runs against a 200 ms loopback endpoint.

A separate process serves, on 127.0.0.1, an ``http``-system endpoint and the three
OpenAI-compatible routes a cascade needs (``/v1/audio/transcriptions``,
``/v1/chat/completions``, ``/v1/audio/speech``); every request is answered after
``DELAY_S`` +- ``JITTER`` (uniform, seeded): a real endpoint never answers in exactly the
same time, and a server that does keeps requests sent together answering together, so the
client handles every reply of a wave at once (``--exact`` shows that case). The server logs
when each request arrived and left. Then real
``run_evaluation`` runs (rendered suite, store, index, scoring of the cheap ``duration``
metric, report) evaluate the ``http`` system and a cascade made of those three endpoints (it
waits on the network three times per item) at concurrency 16 and 64, over 16x concurrency
items each, once with the local executor (this process) and once with ``executor:
processes`` (one worker process per CPU, this process writing the index; ``--executor``
picks one). The layer measure stays in this process.

Printed per run:
- slot use = mean requests in flight at the server / concurrency, over the steady-state
  window (from the 10th to the 90th percentile of the requests' finish times, so the ramp-up
  and the tail of the last wave are left out);
- overhead per item = (wall time of the run - ideal) / items, where ideal = waves x requests
  per item x DELAY_S (waves = ceil(items / concurrency));
- CPU per item = the CPU time (user + system, every thread) of this process and its worker
  processes (the server is left out) during the run / items, and the cores' share it got
  (CPU / wall; above 100 % with worker processes). Starting the workers is part of it.
  At concurrency C with 200 ms replies a saturated run finishes C / 0.2 items per second
  (one request per item), so 95 % slot use needs CPU per item <= 0.2 / (0.95 C) divided by
  nothing less than the core share the process can get;
- context switches per item: how often this process's threads gave up a core (to wait for
  the GIL, a lock, a queue or I/O, or pre-empted), over the run / items; hand-offs between
  the event loop and its worker threads show here, and they cost CPU of their own;
- the machine's load average (other processes compete for the same cores).

Run folders go to the system's temporary folder, or under ``--run-root DIR``; the header
names that folder's file system. Creating a file or folder is part of every unit's cost
(eight a unit), and that cost depends on the file system and its state: on this project's
ext4 a creation takes 22-35 us on a settled disk, but 0.1-0.8 ms for minutes after many
files were deleted (the kernel scans past recently freed inodes); on tmpfs
(``--run-root /dev/shm``) it takes microseconds.

    python bench/concurrency.py [--only layer|run] [--kind http|cascade] [--exact]
                                [--run-root DIR] [--executor local|processes]
                                [CONCURRENCY ...]
"""

from __future__ import annotations

import asyncio
import io
import json
import math
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import urllib.request
import wave
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import process_cpu  # bench/, the script's folder
import yaml
from bench_args import parser_for  # bench/, the script's folder
from instant_scorers import register_instant_scorers  # bench/, the script's folder

_server_pid: int | None = None  # the loopback server's process, not ours to count
DELAY_S = 0.2
JITTER = 0.1  # replies take DELAY_S * (1 +- JITTER), drawn uniformly
RATE = 16000
ITEMS_PER_SLOT = 16


def wav_bytes(seconds: float) -> bytes:
    samples = (3000 * np.sin(np.arange(int(RATE * seconds)) * 0.05)).astype(np.int16)
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(RATE)
        out.writeframes(samples.tobytes())
    return buffer.getvalue()


# -- the loopback server (its own process, so its CPU does not compete for our GIL) -----------


def serve(jitter: float) -> None:
    draw = random.Random(0)
    reply_wav = wav_bytes(0.5)
    chat = json.dumps(
        {
            "id": "bench",
            "object": "chat.completion",
            "model": "bench",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "Six times seven is 42."},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 40, "completion_tokens": 8, "total_tokens": 48},
        }
    ).encode()
    transcript = json.dumps({"text": "What is six times seven?", "language": "en"}).encode()
    log: list[tuple[float, float]] = []

    def answer(path: str) -> tuple[bytes, str]:
        if path.endswith("/chat/completions"):
            return chat, "application/json"
        if path.endswith("/audio/transcriptions"):
            return transcript, "application/json"
        return reply_wav, "audio/wav"  # /audio/speech and the http system's /reply

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                length = 0
                for line in lines[1:]:
                    if line.lower().startswith("content-length:"):
                        length = int(line.split(":", 1)[1])
                if length:
                    await reader.readexactly(length)
                if method == "GET" and path == "/log":
                    body, ctype = json.dumps(log).encode(), "application/json"
                    log.clear()
                else:
                    arrived = time.monotonic()
                    await asyncio.sleep(DELAY_S * (1 + jitter * (2 * draw.random() - 1)))
                    body, ctype = answer(path)
                    log.append((arrived, time.monotonic()))
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n"
                    % (ctype.encode(), len(body))
                    + body
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=1024)
        port = server.sockets[0].getsockname()[1]
        print(port, flush=True)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def slot_use(log: list[tuple[float, float]], concurrency: int) -> float:
    """Mean requests in flight / concurrency between the 10th and 90th percentile of the
    requests' finish times."""
    ends = sorted(end for _, end in log)
    lo, hi = ends[len(ends) // 10], ends[(9 * len(ends)) // 10]
    busy = sum(max(0.0, min(end, hi) - max(start, lo)) for start, end in log)
    return busy / (hi - lo) / concurrency


# -- the client: real runs ------------------------------------------------------------------


def make_suite(folder: Path, n: int) -> Path:
    (folder / "query.wav").write_bytes(wav_bytes(1.0))
    queries = [
        {
            "id": f"q{i:04d}",
            "text": "What is six times seven?",
            "category": "SR",
            "audio": "query.wav",
        }
        for i in range(n)
    ]
    path = folder / "suite.yaml"
    suite = {"name": "bench", "protocol": "single_turn", "queries": queries}
    path.write_text(yaml.safe_dump(suite))
    return path


def system_spec(kind: str, base: str, concurrency: int) -> dict[str, Any]:
    if kind == "http":
        return {"name": "http", "type": "http", "url": f"{base}/reply", "max_concurrency": 256}

    def endpoint(**more: Any) -> dict[str, Any]:
        return {"provider": "openai", "base_url": f"{base}/v1", "max_concurrency": 256, **more}

    return {
        "name": "cascade",
        "type": "cascade",
        "asr": endpoint(model="whisper-1"),
        "llm": endpoint(model="bench-llm"),
        "tts": endpoint(model="tts-1"),
    }


def run_once(
    kind: str,
    concurrency: int,
    base: str,
    root: Path,
    executor: str = "local",
    workers: int | None = None,
) -> dict[str, float]:
    from rich.console import Console

    from voxeval.benchmarks.build import build_suite
    from voxeval.config import parse_run_config
    from voxeval.runner.execute import run_evaluation

    items = ITEMS_PER_SLOT * concurrency
    folder = root / f"{kind}-{concurrency}-{executor}"
    folder.mkdir()
    suite = make_suite(folder, items)
    config = parse_run_config(
        {
            "suite": str(suite),
            "systems": [system_spec(kind, base, concurrency)],
            "metrics": ["duration"],
            # the report's input-intelligibility check transcribes every query: an instant
            # stub here, so the figures measure the framework, not a Whisper model
            "asr": {"provider": "bench-instant"},
            "language_id": {"provider": "bench-instant"},
            "mos": {"provider": "bench-instant"},
            "build": {"dir": str(folder / "built"), "profiles": 1, "conditions": ["clean"]},
            "concurrency": concurrency,
            "executor": executor,
            "processes": {"workers": workers},
            "cache_dir": str(folder / "cache"),
        }
    )
    build_suite(str(suite), folder / "built", config.build, progress=False)  # one-time step
    with urllib.request.urlopen(f"{base}/log") as reply:  # forget the warm-up
        reply.read()
    start, cpu, switched = time.perf_counter(), cpu_seconds(), context_switches()
    run_evaluation(config, folder / "run", console=Console(stderr=True, quiet=True))
    assert_all_done(folder / "run", items)
    wall, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    return summarise(kind, concurrency, base, items, wall, cpu, context_switches() - switched)


def run_layer(kind: str, concurrency: int, base: str) -> dict[str, float]:
    """The execution model and HTTP layer alone: ``execute_units`` with the same systems,
    each unit awaiting one reply (no run folder, index, scoring or report)."""
    from rich.console import Console

    from voxeval.audio import audio_from_bytes
    from voxeval.config import SystemSpec
    from voxeval.runner.execute import execute_units
    from voxeval.systems.base import Turn
    from voxeval.systems.factory import build_system

    items = ITEMS_PER_SLOT * concurrency
    system: Any = build_system(SystemSpec(**system_spec(kind, base, concurrency)), None)
    query = audio_from_bytes(wav_bytes(1.0), source="bench")

    class Unit:
        def __init__(self, i: int) -> None:
            self.key = f"q{i}"

    async def work(unit: Unit) -> None:
        reply = await system.areply([Turn(role="user", audio=query, item_id=unit.key)])
        assert reply.audio is not None

    ctx = SimpleNamespace(
        config=SimpleNamespace(concurrency=concurrency), console=Console(quiet=True)
    )
    with urllib.request.urlopen(f"{base}/log") as reply:
        reply.read()
    start, cpu, switched = time.perf_counter(), cpu_seconds(), context_switches()
    outcome = execute_units(ctx, [Unit(i) for i in range(items)], work, lambda u, e: str(e), "")
    wall, cpu = time.perf_counter() - start, cpu_seconds() - cpu
    assert outcome.done == items, outcome.errors[:3]
    return summarise(kind, concurrency, base, items, wall, cpu, context_switches() - switched)


def assert_all_done(run_dir: Path, items: int) -> None:
    from voxeval.store import RunStore

    store = RunStore(run_dir)
    try:
        done = len(store.units.finished_keys())
    finally:
        store.close()
    assert done == items, f"{done} of {items} units done"


def cpu_seconds() -> float:
    """CPU time so far of this process and its descendants, the loopback server left out
    (``process_cpu.cpu_seconds``)."""
    return process_cpu.cpu_seconds(leave_out=_server_pid)


def context_switches() -> int:
    """Times this process's threads (and its ended children's: not the workers of a fork
    server) gave up a core so far: waiting
    (for the GIL, a lock, a queue, I/O) or pre-empted. A hand-off between the event loop and
    a worker thread costs one or two; fewer per item means less time lost to hand-offs."""
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return sum(u.ru_nvcsw + u.ru_nivcsw for u in usage)


def summarise(
    kind: str, concurrency: int, base: str, items: int, wall: float, cpu: float, switches: int
) -> dict[str, float]:
    with urllib.request.urlopen(f"{base}/log") as reply:
        log = [tuple(pair) for pair in json.loads(reply.read())]
    per_item = 1 if kind == "http" else 3
    assert len(log) == items * per_item, f"{len(log)} requests for {items} items"
    ideal = math.ceil(items / concurrency) * per_item * DELAY_S
    return {
        "items": items,
        "wall_s": wall,
        "slot_use": slot_use(log, concurrency),  # type: ignore[arg-type]
        "overhead_ms": (wall - ideal) * 1000 / items,
        "cpu_ms": cpu * 1000 / items,
        "core_share": cpu / wall,
        "switches": switches / items,
    }


def filesystem_of(path: str) -> str:
    """The type of the file system holding ``path`` (from /proc/self/mounts; Linux)."""
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return "unknown"
    best, kind = "", "unknown"
    resolved = os.path.realpath(path)
    for line in mounts:
        fields = line.split()
        if len(fields) < 3:
            continue
        point = fields[1].replace("\\040", " ")
        inside = resolved == point or resolved.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, kind = point, fields[2]
    return kind


def main(
    levels: list[int],
    modes: tuple[str, ...],
    kinds: tuple[str, ...],
    jitter: float,
    run_root: str | None,
    executors: tuple[str, ...] = ("local",),
    workers: int | None = None,
) -> None:
    os.environ["VOXEVAL_NO_CACHE"] = "1"
    register_instant_scorers("What is six times seven?")
    global _server_pid
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", str(jitter)], stdout=subprocess.PIPE, text=True
    )
    _server_pid = server.pid
    try:
        assert server.stdout is not None
        base = f"http://127.0.0.1:{int(server.stdout.readline())}"
        with tempfile.TemporaryDirectory(dir=run_root) as tmp:
            print(f"run folders in {tmp} ({filesystem_of(tmp)})", flush=True)
            plan = [
                (mode, kind, executor, level)
                for mode in modes
                for kind in kinds
                for executor in (executors if mode == "run" else ("local",))
                for level in levels
            ]
            for mode, kind, executor, concurrency in plan:
                if concurrency == levels[0]:  # warm-up (imports, first connections)
                    run_layer(kind, 4, base) if mode == "layer" else None
                load = os.getloadavg()
                if mode == "layer":
                    got = run_layer(kind, concurrency, base)
                else:
                    got = run_once(kind, concurrency, base, Path(tmp), executor, workers)
                label = mode if mode == "layer" else f"{mode} ({executor})"
                print(
                    f"{label:15s} {kind:8s} concurrency {concurrency:3d}: slot use "
                    f"{got['slot_use'] * 100:5.1f}%  overhead {got['overhead_ms']:5.2f} ms/item"
                    f"  cpu {got['cpu_ms']:5.2f} ms/item"
                    f" ({got['core_share'] * 100:3.0f}% of a core)"
                    f"  {got['switches']:4.0f} switches/item"
                    f"  ({got['items']} items in {got['wall_s']:.2f} s; load average before "
                    f"{load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f})",
                    flush=True,
                )
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:  # the loopback server's own process
        serve(float(sys.argv[2]))
    else:
        parser = parser_for(__doc__)
        parser.add_argument(
            "levels",
            nargs="*",
            type=int,
            default=[16, 64],
            metavar="CONCURRENCY",
            help="concurrency levels (default 16 64)",
        )
        parser.add_argument("--only", choices=("layer", "run"), help="one measure only")
        parser.add_argument("--kind", choices=("http", "cascade"), help="one system only")
        parser.add_argument("--exact", action="store_true", help="replies after exactly 200 ms")
        parser.add_argument("--run-root", metavar="DIR", help="where run folders go")
        parser.add_argument(
            "--executor",
            choices=("local", "processes"),
            help="how runs execute their units (default: both, one after the other; layer "
            "measures are always in this process)",
        )
        parser.add_argument(
            "--workers",
            type=int,
            metavar="N",
            help="worker processes of the processes runs (default: voxeval's choice)",
        )
        args = parser.parse_args()
        jitter = 0.0 if args.exact else JITTER
        print(f"replies after {DELAY_S * 1000:.0f} ms +- {jitter:.0%}", flush=True)
        main(
            args.levels,
            (args.only,) if args.only else ("layer", "run"),
            (args.kind,) if args.kind else ("http", "cascade"),
            jitter,
            args.run_root,
            (args.executor,) if args.executor else ("local", "processes"),
            args.workers,
        )
