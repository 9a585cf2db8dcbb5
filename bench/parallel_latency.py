"""Is the cascade agent's measured latency independent of our own parallel calls?

Runs CALLS calls of the embedded cascade agent with the scripted caller (audio mode) one at a
time, then the same CALLS calls at once in threads, and prints the median measured response
latency over the replies both runs made, and their ratio (parallel / single; the target is
within 10 %). The shared SmolLM2's context is reset before every request
(``CascadeBench.without_prefix_reuse``), so a request does the same work however calls
interleave. With the compute lane (the default) model compute is serialised and timed only
while it holds the lane; with ``--no-lane`` every section is timed on the wall clock, which
shows what contention does to an unprotected measurement.

Last line: ``parallel_single_latency_ratio: R``.

    python bench/parallel_latency.py [--no-lane] [--parallel-first] [CALLS [CALL_S]]
"""

from __future__ import annotations

import os
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench_args import parser_for  # bench/, the script's folder

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for cascade_parties

from cascade_parties import CascadeBench

from voxeval.errors import ProviderUnavailable
from voxeval.simulation.compute_lane import SHARED_LANE
from voxeval.simulation.engine import CallResult

WARM_UP_S = 10.0  # one discarded call first: first-use costs are not a call's latency


def by_reply(results: list[CallResult]) -> dict[tuple[int, int], float]:
    """Measured latency per (call seed, agent turn)."""
    return {
        (seed, t["turn"]): float(t["agent_s"])
        for seed, r in enumerate(results)
        for t in r.details["latency"]["turns"]
        if t["turn"] > 0  # the scripted greeting costs nothing
    }


def main(calls: int, call_s: float, use_lane: bool, parallel_first: bool = False) -> None:
    try:
        bench = CascadeBench()
    except ProviderUnavailable as exc:
        print(f"parallel latency: not run ({exc})")
        return
    bench.without_prefix_reuse()
    lane = SHARED_LANE if use_lane else None
    bench.call(calls, WARM_UP_S, lane)

    # The same calls (seeds) one at a time, then all at once: the conversations are the same
    # (greedy SmolLM2, seeded caller), so replies are compared pairwise.
    def one_at_a_time() -> tuple[dict[tuple[int, int], float], float]:
        results = [bench.call(seed, call_s, lane) for seed in range(calls)]
        return by_reply(results), os.getloadavg()[0]

    def all_at_once() -> tuple[dict[tuple[int, int], float], float]:
        with ThreadPoolExecutor(max_workers=calls) as pool:
            results = list(pool.map(lambda s: bench.call(s, call_s, lane), range(calls)))
        return by_reply(results), os.getloadavg()[0]

    # the order can be swapped to tell drift in the machine's load from an effect of running
    # in parallel
    if parallel_first:
        (parallel, load_parallel), (single, load_single) = all_at_once(), one_at_a_time()
    else:
        (single, load_single), (parallel, load_parallel) = one_at_a_time(), all_at_once()
    both = sorted(set(single) & set(parallel))
    one = statistics.median(single[k] for k in both)
    many = statistics.median(parallel[k] for k in both)
    print(f"timing: {'compute lane' if use_lane else 'wall clock, no lane'}")
    print(f"order: {'parallel first' if parallel_first else 'one at a time first'}")
    print(f"replies in both runs: {len(both)} of {len(single)} single / {len(parallel)} parallel")
    print(f"one call at a time: median {one * 1000:.0f} ms (load {load_single:.2f})")
    print(f"{calls} calls in parallel: median {many * 1000:.0f} ms (load {load_parallel:.2f})")
    ratios = [parallel[k] / single[k] for k in both if single[k] > 0]
    print(f"median of per-reply ratios: {statistics.median(ratios):.3f}")
    print(f"parallel_single_latency_ratio: {many / one:.3f}")


if __name__ == "__main__":
    parser = parser_for(__doc__)
    parser.add_argument("calls", nargs="?", type=int, default=8, help="calls (default 8)")
    parser.add_argument(
        "call_s", nargs="?", type=float, default=45.0, help="simulated s per call (default 45)"
    )
    parser.add_argument("--no-lane", action="store_true", help="time on the wall clock")
    parser.add_argument(
        "--parallel-first", action="store_true", help="run the parallel calls before the single"
    )
    args = parser.parse_args()
    main(
        args.calls,
        args.call_s,
        use_lane=not args.no_lane,
        parallel_first=args.parallel_first,
    )
