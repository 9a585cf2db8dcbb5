"""Same seed, same summary.json: run a small single-turn, multi-turn and live-call evaluation
(the end-to-end fixtures of tests/protocols: loopback judge and systems, scripted agents) and
write their summaries; compare two such files, measured latency aside.

    PYTHONPATH=src:. python scripts/summary_equivalence.py run before.json   # on the old tree
    PYTHONPATH=src:. python scripts/summary_equivalence.py run after.json    # on the new tree
    python scripts/summary_equivalence.py compare before.json after.json

Differences under keys naming latency, ``generated_at`` and ``run_id`` are expected (they are
measured or fresh); any other difference is printed and the exit code is 1."""

from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

VOLATILE = re.compile(r"latency|generated_at|run_id")


def run(out_file: Path) -> None:
    from tests.fakes.openai_server import FakeOpenAIServer
    from tests.protocols import test_live_call as lc
    from tests.protocols import test_multi_turn as mt
    from tests.protocols import test_single_turn as st
    from typer.testing import CliRunner

    from voxeval.cli.main import app

    def summary(config: Path, out: Path) -> Any:
        result = CliRunner().invoke(app, ["run", str(config), "--out", str(out)])
        if result.exit_code != 0:
            raise SystemExit(result.output)
        return json.loads((out / "report" / "summary.json").read_text(encoding="utf-8"))

    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name in ("st", "mt", "lc"):
            (root / name).mkdir()
        with FakeOpenAIServer(st.World()) as server:
            config = st.write_config(root / "st", server.url)
            results["single_turn"] = summary(config, root / "st/o")
        with FakeOpenAIServer(mt.World()) as server:
            config = mt.write_config(root / "mt", server.url)
            results["multi_turn"] = summary(config, root / "mt/o")
        results["live_call"] = summary(lc.write_config(root / "lc"), root / "lc/o")
    out_file.write_text(json.dumps(results, indent=1, sort_keys=True), encoding="utf-8")


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    if type(a) is not type(b):
        return [path]
    if isinstance(a, dict):
        found = []
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                found.append(f"{path}/{key}")
            else:
                found += differences(a[key], b[key], f"{path}/{key}")
        return found
    if isinstance(a, list):
        if len(a) != len(b):
            return [path]
        pairs = enumerate(zip(a, b, strict=True))
        return [d for i, (x, y) in pairs for d in differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [path]


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "run":
        run(Path(argv[1]))
        return 0
    if len(argv) == 3 and argv[0] == "compare":
        before, after = (json.loads(Path(p).read_text(encoding="utf-8")) for p in argv[1:])
        found = [d for d in differences(before, after) if not VOLATILE.search(d)]
        for path in found:
            print(path)
        print(f"{len(found)} differences outside measured latency, generated_at and run_id")
        return 1 if found else 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
