import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "sim_speed.py"


def test_bench_reports_at_least_100_simulated_seconds_per_wall_second() -> None:
    out = subprocess.run([sys.executable, str(BENCH)], capture_output=True, text=True, check=True)
    last = out.stdout.strip().splitlines()[-1]
    name, value = last.split(":")
    assert name == "simulated_seconds_per_wall_second"
    assert float(value) >= 100
