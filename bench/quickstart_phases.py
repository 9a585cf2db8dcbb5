"""Where the time and memory of the quickstart go: wall time and peak resident memory of each
phase of ``voxeval run examples/quickstart.yaml``, with an empty voxeval cache by default.

The run is done in this process (as ``voxeval run`` does it) with light probes around its
phases; model loads and model calls are timed as they happen. Phases, in order:

- ``start``: imports and reading the config;
- ``render``: building the suite's audio (TTS engines loaded, queries rendered, noise mixed);
- ``units``: the unit pass: the system under test answers (its own ASR -> LLM -> TTS) and each
  reply is scored (k sampled transcripts, DNSMOS, language identification, ...);
- ``input check``: the report's user-side check (every rendered query transcribed, DNSMOS);
- ``report``: the rest of the report (summary, figures, HTML);
- ``voxeval report``: the quickstart's second command, as a separate process (``--no-report``
  leaves it out).

Peak RSS of a phase is the largest resident set sampled every 20 ms while it ran (the process's
high-water mark at its end is printed too); the load average is read before and after. Below
the phases, every model load (seconds, resident growth) and the summed seconds of every model
method (summed over threads: with ``concurrency: 2`` two calls overlap, so these can exceed
the phase's wall time).

    python bench/quickstart_phases.py [--limit N] [--cache DIR] [--out DIR] [--no-report]

``--limit N`` keeps the first N items (3 items = 9 units) for a quick look; a full run is 93
units. ``--cache DIR`` reuses a cache folder (warm cache); by default a new empty one is made
and removed. The last lines are ``quickstart_phases.<phase>.{wall_s,peak_rss_mb}: value``.
"""

from __future__ import annotations

import functools
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from bench_args import parser_for  # bench/, the script's folder

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "examples" / "quickstart.yaml"
PAGE_MB = os.sysconf("SC_PAGE_SIZE") / 1e6
MODEL_METHODS = ("transcribe", "identify_language", "synthesize", "chat", "predict", "segments")


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * PAGE_MB


def hwm_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1000
    return 0.0


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


class Phases:
    """Wall time and sampled peak RSS of named phases (a phase inside another is subtracted
    from the outer one's wall time; the outer's peak includes it)."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, float]] = {}
        self.order: list[str] = []
        self.stack: list[str] = []
        self.peaks: dict[str, float] = {}
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.sampler = threading.Thread(target=self._sample, daemon=True)
        self.sampler.start()
        self.total_cpu = 0.0

    def _sample(self) -> None:
        while not self.stop.wait(0.02):
            now = rss_mb()
            with self.lock:
                for name in self.stack:
                    self.peaks[name] = max(self.peaks.get(name, 0.0), now)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        with self.lock:
            if name not in self.rows:
                self.rows[name] = {
                    "wall_s": 0.0,
                    "cpu_s": 0.0,
                    "peak_rss_mb": 0.0,
                    "inner_s": 0.0,
                    "inner_cpu": 0.0,
                }
                self.order.append(name)
            self.stack.append(name)
            self.peaks[name] = max(self.peaks.get(name, 0.0), rss_mb())
            outer = self.stack[-2] if len(self.stack) > 1 else None
        started, cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            spent, cpu = time.perf_counter() - started, time.process_time() - cpu
            with self.lock:
                self.stack.remove(name)
                row = self.rows[name]
                row["wall_s"] += spent
                row["cpu_s"] += cpu
                row["peak_rss_mb"] = max(row["peak_rss_mb"], self.peaks.pop(name, 0.0), rss_mb())
                row["rss_end_mb"] = rss_mb()
                if outer is not None:
                    self.rows[outer]["inner_s"] += spent
                    self.rows[outer]["inner_cpu"] += cpu


class ModelTimes:
    """Model loads and summed call seconds by ``kind:provider`` (class) and method."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.loads: list[tuple[str, float, float]] = []
        self.calls: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
        self.patched: set[type] = set()

    def add_call(self, label: str, seconds: float) -> None:
        with self.lock:
            entry = self.calls[label]
            entry[0] += 1
            entry[1] += seconds

    def patch_class(self, cls: type, kind: str) -> None:
        with self.lock:
            if cls in self.patched:
                return
            self.patched.add(cls)
        for method in MODEL_METHODS:
            original = getattr(cls, method, None)
            if original is None or not callable(original):
                continue
            label = f"{kind}:{getattr(cls, 'name', '') or cls.__name__}.{method}"

            def timed(*args: Any, _original: Any = original, _label: str = label, **kw: Any) -> Any:
                started = time.perf_counter()
                try:
                    return _original(*args, **kw)
                finally:
                    self.add_call(_label, time.perf_counter() - started)

            setattr(cls, method, functools.wraps(original)(timed))


def install_probes(phases: Phases, models: ModelTimes) -> None:
    """Wrap the run's phase entry points and the provider factory (this process only)."""
    from voxeval.benchmarks import build as build_module
    from voxeval.protocols.single_turn import SingleTurnProtocol
    from voxeval.providers import factory
    from voxeval.registry import lookup
    from voxeval.runner import execute

    def around(owner: Any, attr: str, name: str | Callable[..., str]) -> None:
        original = getattr(owner, attr)

        @functools.wraps(original)
        def wrapper(*args: Any, **kw: Any) -> Any:
            label = name(*args, **kw) if callable(name) else name
            with phases.phase(label):
                return original(*args, **kw)

        setattr(owner, attr, wrapper)

    around(build_module, "build_suite", "render")
    around(execute, "execute_units", lambda ctx, units, work, on_error, desc, *a, **k: "units")
    around(SingleTurnProtocol, "input_intelligibility", "input check")
    around(execute, "write_report_for", "report")

    instantiate = factory._instantiate

    def timed_instantiate(kind: str, spec: Any) -> Any:
        name = (
            spec
            if isinstance(spec, str)
            else getattr(spec, "provider", None) or spec.get("provider")
        )
        with suppress(Exception):
            models.patch_class(lookup(kind, str(name)), kind)
        before, started = rss_mb(), time.perf_counter()
        provider = instantiate(kind, spec)
        with models.lock:
            models.loads.append(
                (f"{kind}:{name}", time.perf_counter() - started, rss_mb() - before)
            )
        return provider

    factory._instantiate = timed_instantiate

    # a fresh Whisper model per seeded sampled decode (when the provider makes one)
    from voxeval.providers.asr import asr_whisper

    new_model = getattr(asr_whisper, "_new_model", None)
    if new_model is not None:

        def timed_new_model(*args: Any, **kw: Any) -> Any:
            started = time.perf_counter()
            try:
                return new_model(*args, **kw)
            finally:
                models.add_call(
                    "asr:whisper model load (_new_model)", time.perf_counter() - started
                )

        asr_whisper._new_model = timed_new_model


def run_once(limit: int | None, cache: Path, out: Path) -> tuple[Phases, ModelTimes, float]:
    phases, models = Phases(), ModelTimes()
    started, cpu = time.perf_counter(), time.process_time()
    with phases.phase("start"):
        from rich.console import Console

        from voxeval.config import load_run_config
        from voxeval.runner.execute import run_evaluation

        install_probes(phases, models)
        config = load_run_config(CONFIG, {"limit": limit})
    os.environ["VOXEVAL_CACHE_DIR"] = str(cache)
    run_evaluation(config, out, limit=limit, resume=False, console=Console(stderr=True))
    phases.total_cpu = time.process_time() - cpu
    return phases, models, time.perf_counter() - started


def voxeval_report(out: Path, cache: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and max RSS (MB) of ``voxeval report OUT`` in its own process."""
    env = {**os.environ, "VOXEVAL_CACHE_DIR": str(cache)}
    started = time.perf_counter()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    before, cpu = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
    subprocess.run(
        [sys.executable, "-m", "voxeval", "report", str(out)],
        env=env,
        check=False,
        stdout=subprocess.DEVNULL,
    )
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    # ru_maxrss of children is the largest child so far: only meaningful when it grew
    cpu = usage.ru_utime + usage.ru_stime - cpu
    return time.perf_counter() - started, cpu, max(usage.ru_maxrss, before) / 1000


def main() -> None:
    parser = parser_for(__doc__)
    parser.add_argument("--limit", type=int, default=None, help="first N items only")
    parser.add_argument("--cache", type=Path, default=None, help="cache folder to (re)use")
    parser.add_argument("--out", type=Path, default=None, help="run folder to keep")
    parser.add_argument("--no-report", action="store_true", help="skip `voxeval report`")
    args = parser.parse_args()
    temp = Path(tempfile.mkdtemp(prefix="voxeval-quickstart-"))
    cache = args.cache or temp / "cache"
    out = args.out or temp / "run"
    load_before = load()
    try:
        phases, models, total = run_once(args.limit, cache, out)
        hwm = hwm_mb()
        load_after = load()
        report = None if args.no_report else voxeval_report(out, cache)
        load_end = load()
    finally:
        if args.out is None:
            shutil.rmtree(out, ignore_errors=True)
        if args.cache is None:
            shutil.rmtree(cache, ignore_errors=True)
        shutil.rmtree(temp, ignore_errors=True)
    units = "all" if args.limit is None else f"--limit {args.limit}"
    print(
        f"quickstart ({units}), cache {'reused' if args.cache else 'empty'}, {os.cpu_count()} CPUs"
    )
    print(f"load average (1/5/15 min) before {load_before}, after the run {load_after}")
    print(
        f"{'phase':16} {'wall s':>8} {'share':>6} {'CPU s':>8} {'share':>6} "
        f"{'peak RSS MB':>12} {'RSS at end MB':>14}"
    )
    for name in phases.order:
        row = phases.rows[name]
        own = row["wall_s"] - row["inner_s"]
        own_cpu = row["cpu_s"] - row["inner_cpu"]
        print(
            f"{name:16} {own:8.1f} {own / total:6.1%} {own_cpu:8.1f} "
            f"{own_cpu / max(phases.total_cpu, 1e-9):6.1%} {row['peak_rss_mb']:12.0f} "
            f"{row.get('rss_end_mb', 0.0):14.0f}"
        )
    print(
        f"{'run total':16} {total:8.1f} {1:6.0%} {phases.total_cpu:8.1f} {1:6.0%} "
        f"{hwm:12.0f}   (VmHWM)"
    )
    if report is not None:
        print(
            f"{'voxeval report':16} {report[0]:8.1f} {'':6} {report[1]:8.1f} {'':6} "
            f"{report[2]:12.0f}   load {load_end}"
        )
    print("\nmodel loads (seconds, resident growth MB while loading):")
    for label, seconds, grown in models.loads:
        print(f"  {label:40} {seconds:7.2f} s {grown:8.0f} MB")
    print("\nmodel calls (count, summed seconds over threads):")
    for label, (count, seconds) in sorted(models.calls.items(), key=lambda kv: -kv[1][1]):
        print(f"  {label:40} {int(count):6d} {seconds:9.1f} s")
    for name in phases.order:
        row = phases.rows[name]
        key = name.replace(" ", "_")
        print(f"quickstart_phases.{key}.wall_s: {row['wall_s'] - row['inner_s']:.4g}")
        print(f"quickstart_phases.{key}.cpu_s: {row['cpu_s'] - row['inner_cpu']:.4g}")
        print(f"quickstart_phases.{key}.peak_rss_mb: {row['peak_rss_mb']:.4g}")
    print(f"quickstart_phases.run.wall_s: {total:.4g}")
    print(f"quickstart_phases.run.cpu_s: {phases.total_cpu:.4g}")
    print(f"quickstart_phases.run.peak_rss_mb: {hwm:.4g}")


if __name__ == "__main__":
    main()
