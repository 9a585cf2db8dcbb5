"""What one unit costs on this machine: CPU seconds and wall seconds, bytes of artifacts and
rows in the index, for the unit kinds an evaluation is made of.

Each case is a real ``voxeval run`` (real models, real HTTP on 127.0.0.1) done twice, with N1
and then N2 units, each in a fresh folder; the per-unit figures are the differences divided
by N2 - N1, so one-time costs (model loads, the report, the suite build) drop out. CPU time is
the process's own (all threads) plus its children's (``getrusage``). Cases:

- ``single-turn http``: an ``http`` system answering at once (a spoken reply) from a loopback
  server, scored with the ``duration`` metric only (the framework's and HTTP client's share);
- ``single-turn cascade``: the embedded cascade (Whisper tiny.en -> SmolLM2-135M -> Piper);
- ``scoring (embedded ASR+MOS)``: the http case scored with ``wer`` (k=3 Whisper tiny.en
  transcripts) and ``mos`` (DNSMOS); its figures minus the http case's are the scoring cost;
- ``live call``: the scripted agent called by the scripted (rule) caller on the clinic line
  in audio mode (Piper voices, Whisper tiny.en ears), default call metrics.

    python bench/unit_costs.py [--quick]

Prints one table row per case and the lines ``unit_costs.<case>.<figure>: value`` last.
"""

from __future__ import annotations

import base64
import json
import os
import resource
import sqlite3
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml
from bench_args import parser_for  # bench/, the script's folder
from rich.console import Console

from voxeval.audio import Audio, audio_to_wav_bytes
from voxeval.benchmarks.build import build_suite
from voxeval.config import parse_run_config
from voxeval.errors import ProviderUnavailable
from voxeval.providers.factory import create_provider
from voxeval.runner.execute import run_evaluation

REPLY_TEXT = "You can boil an egg for about eight minutes for a firm yolk."


class ReplyServer:
    """A loopback voice system answering every POST at once with the same spoken reply."""

    def __init__(self, reply: Audio) -> None:
        body = json.dumps(
            {"audio": base64.b64encode(audio_to_wav_bytes(reply)).decode(), "text": REPLY_TEXT}
        ).encode()

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/reply"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> ReplyServer:
        self.thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


TOPICS = ("an egg", "rice", "pasta", "potatoes", "carrots", "beans", "lentils", "broccoli")


def make_suite(folder: Path, n: int, build: dict[str, Any]) -> Path:
    """``n`` distinct spoken queries, rendered by the suite builder (a one-time step, done
    here before the run is timed): distinct audio, so no call is a cache hit."""
    queries = [
        {"id": f"q{i:03d}", "category": "SR", "checklist": ["Gives a cooking time"],
         "text": f"Question {i + 1}: how long should I boil {TOPICS[i % len(TOPICS)]}?"}
        for i in range(n)
    ]  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "suite.yaml").write_text(
        yaml.safe_dump({"name": "bench", "protocol": "single_turn", "queries": queries})
    )
    build_suite(str(folder / "suite.yaml"), Path(build["dir"]), build, progress=False)
    return folder / "suite.yaml"


@dataclass
class Measure:
    cpu_s: float
    wall_s: float
    artifact_bytes: int
    index_rows: int
    index_bytes: int
    units: int


def cpu_now() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def index_rows(index: Path) -> int:
    with sqlite3.connect(index) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return sum(int(db.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0]) for t in tables)


def measure(config: dict[str, Any], out: Path) -> Measure:
    parsed = parse_run_config(config)
    cpu, wall = cpu_now(), time.perf_counter()
    run_evaluation(parsed, out, console=Console(stderr=True, quiet=True))
    wall = time.perf_counter() - wall
    cpu = cpu_now() - cpu
    with sqlite3.connect(out / "index.sqlite") as db:
        units = int(db.execute("SELECT COUNT(*) FROM units").fetchone()[0])
    index = out / "index.sqlite"
    db_bytes = sum(
        p.stat().st_size for p in out.glob("index.sqlite*") if p.is_file()
    )  # with the WAL
    return Measure(cpu, wall, folder_bytes(out / "items"), index_rows(index), db_bytes, units)


def marginal(make: Callable[[Path, int], dict[str, Any]], n1: int, n2: int) -> dict[str, float]:
    """Per-unit differences between a run of n1 and one of n2 units (fresh folders), after a
    one-unit warm-up run (first imports, model files into the page cache)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        measure(make(root / "w", 1), root / "w" / "run")
        small = measure(make(root / "a", n1), root / "a" / "run")
        large = measure(make(root / "b", n2), root / "b" / "run")
    units = large.units - small.units
    return {
        "units": float(units),
        "cpu_s": (large.cpu_s - small.cpu_s) / units,
        "wall_s": (large.wall_s - small.wall_s) / units,
        "artifact_kb": large.artifact_bytes / large.units / 1024,
        "index_rows": large.index_rows / large.units,
        "index_kb": (large.index_bytes - small.index_bytes) / units / 1024,
    }


def single_turn(system: dict[str, Any], metrics: list[str], **extra: Any) -> Callable[..., Any]:
    def make(root: Path, n: int) -> dict[str, Any]:
        build = {"dir": str(root / "built"), "profiles": 1, "conditions": ["clean"]}
        suite = make_suite(root / "suite", n, build)
        return {
            "suite": str(suite),
            "systems": [system],
            "metrics": metrics,
            "build": build,
            "concurrency": 2,
            "cache_dir": str(root / "cache"),  # empty: every model call runs
            **extra,
        }

    return make


def live_call(root: Path, n: int) -> dict[str, Any]:
    return {
        "suite": "clinic-calls",
        "systems": [{"name": "reference", "type": "scripted"}],
        "trials": 1,
        "seed": 7,
        "limit": n,
        "concurrency": 2,
        "cache_dir": str(root / "cache"),
        "simulation": {
            "caller": "scripted",
            "mode": "audio",
            "caller_voice": "piper:joe",
            "agent_voice": "piper:joe",
            "caller_asr": {"provider": "whisper-tiny-en"},
            "latency_model": {
                "agent": {"kind": "normal", "mean_ms": 900, "sd_ms": 150},
                "tool": {"kind": "fixed", "ms": 300},
            },
        },
    }


def main(quick: bool) -> None:
    n1, n2 = (1, 3) if quick else (2, 6)
    results: dict[str, dict[str, float]] = {}
    reply = create_provider("tts", "piper").synthesize(REPLY_TEXT)  # about 3 s of speech
    with ReplyServer(reply) as server:
        http = {"name": "http", "type": "http", "url": server.url}
        cases: list[tuple[str, Callable[..., Any], int, int]] = [
            ("single-turn http", single_turn(http, ["duration"]), n1 * 4, n2 * 4),
            ("scoring (embedded ASR+MOS)", single_turn(http, ["duration", "wer", "mos"]), n1, n2),
            ("single-turn cascade", single_turn({"name": "c", "type": "cascade"}, ["duration"]),
             n1, n2),
            ("live call", live_call, 1, max(2, n2 // 2)),  # about 1 minute of call each
        ]  # fmt: skip
        for name, make, a, b in cases:
            try:
                results[name] = marginal(make, a, b)
            except ProviderUnavailable as exc:
                print(f"{name}: not run ({exc})")
                continue
            print(f"measured {name}", file=sys.stderr)
    if "scoring (embedded ASR+MOS)" in results and "single-turn http" in results:
        scored, plain = results["scoring (embedded ASR+MOS)"], results["single-turn http"]
        results["scoring (embedded ASR+MOS)"] = {
            **scored,
            "cpu_s": scored["cpu_s"] - plain["cpu_s"],
            "wall_s": scored["wall_s"] - plain["wall_s"],
        }
    print(f"machine: {os.cpu_count()} CPUs, load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    header = f"{'case':30} {'units':>5} {'CPU s/unit':>11} {'wall s/unit':>12} "
    header += f"{'artifacts KB':>13} {'index rows':>11} {'index KB':>9}"
    print(header)
    for name, r in results.items():
        print(
            f"{name:30} {int(r['units']):5d} {r['cpu_s']:11.3f} {r['wall_s']:12.3f} "
            f"{r['artifact_kb']:13.1f} {r['index_rows']:11.1f} {r['index_kb']:9.1f}"
        )
    for name, r in results.items():
        key = name.split(" (")[0].replace(" ", "_").replace("-", "_")
        for figure in ("cpu_s", "wall_s", "artifact_kb", "index_rows", "index_kb"):
            print(f"unit_costs.{key}.{figure}: {r[figure]:.4g}")


if __name__ == "__main__":
    parser = parser_for(__doc__)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smaller runs (marginal cost from 1 and 3 units, not 2 and 6)",
    )
    main(parser.parse_args().quick)
