"""A live call with real components: simulated seconds per wall second, and the engine's
overhead as a share of the components' compute.

The embedded cascade agent (Whisper tiny.en -> SmolLM2-135M -> Piper, Silero VAD) talks to
the scripted caller (Piper voice, Whisper tiny.en ears) in audio mode until five simulated
minutes are reached (calls are repeated when one ends sooner). Component compute is every
section the engine times in its compute lane: the agent's replies and listening, the
caller's decisions and voice, the turn detector; the engine's overhead is the rest of the
call's wall time. Prints ``cascade_simulated_seconds_per_wall_second: N`` and
``engine_overhead_share: F`` last.

    python bench/cascade_call.py [TARGET_SIMULATED_S]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from bench_args import parser_for  # bench/, the script's folder

sys.path.insert(0, str(Path(__file__).resolve().parent))  # for cascade_parties

from cascade_parties import CascadeBench

from voxeval.errors import ProviderUnavailable


def main(target_s: float) -> None:
    try:
        bench = CascadeBench()
    except ProviderUnavailable as exc:
        print(f"cascade call: not run ({exc})")
        return
    simulated = wall = compute = 0.0
    calls = 0
    while simulated < target_s:
        result = bench.call(seed=calls, max_duration_s=target_s - simulated)
        calls += 1
        simulated += result.duration_s
        wall += result.wall_s
        compute += float(result.details["compute_s"])
        print(
            f"call {calls}: {result.duration_s:.1f} simulated s in {result.wall_s:.1f} wall s "
            f"({result.end_reason}, {len(result.details['latency']['turns'])} agent replies)"
        )
    overhead = (wall - compute) / compute
    print(f"machine load (1/5/15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{calls} call(s): {simulated:.1f} simulated s in {wall:.1f} wall s")
    print(f"component compute {compute:.1f} s; engine {wall - compute:.2f} s")
    print(f"cascade_simulated_seconds_per_wall_second: {simulated / wall:.2f}")
    print(f"engine_overhead_share: {overhead:.4f}")


if __name__ == "__main__":
    parser = parser_for(__doc__)
    parser.add_argument(
        "target_simulated_s", nargs="?", type=float, default=300.0, help="(default 300)"
    )
    main(parser.parse_args().target_simulated_s)
