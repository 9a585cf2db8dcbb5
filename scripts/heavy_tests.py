"""Rewrite tests/heavy_tests.txt, the tests `make check` leaves out, from a durations report.

`make check` is the contributor's fast lane: lint, types and the tests that need no model,
browser, database server or cluster. Some tests that need none of those still take seconds
(a whole run through the CLI, a seeded simulation, a loopback server with real timing);
`make test` runs them, `make check` leaves out those listed in tests/heavy_tests.txt.

Make a report on the machine you measure (all durations, the fast lane's selection):

    pytest -q -n 2 --dist loadfile --durations=0 --durations-min=0 -p no:cacheprovider \\
        -m "not models and not slow and not browser and not postgres and not cluster \\
            and not serial" > durations.txt
    python scripts/heavy_tests.py durations.txt --threshold 1.0 --note "2 cores, load 1"

A test is heavy when its setup, call and teardown together took at least ``--threshold``
seconds; a file is listed whole when a test's setup alone took that long (a module fixture).
The list is rewritten whole, so a test that became fast leaves it.
"""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path

LIST = Path(__file__).resolve().parent.parent / "tests" / "heavy_tests.txt"
PHASES = ("setup", "call", "teardown")
DURATION_LINE = re.compile(
    r"^(?P<seconds>\d+(?:\.\d+)?)s\s+(?P<phase>setup|call|teardown)\s+(?P<id>\S+)"
)


def per_test_seconds(report: str, phases: tuple[str, ...] = PHASES) -> dict[str, float]:
    """Seconds per test node id in ``phases`` (setup + call + teardown by default) from
    pytest's ``--durations`` output."""
    seconds: dict[str, float] = defaultdict(float)
    for line in report.splitlines():
        match = DURATION_LINE.match(line.strip())
        if match and match["phase"] in phases:
            seconds[match["id"]] += float(match["seconds"])
    return dict(seconds)


def heavy(report: str, threshold: float) -> list[str]:
    """Node ids that took at least ``threshold`` s, and the whole file of any test whose
    setup alone did: that is a module fixture, which would only move to the file's next test
    if that one test were left out."""
    seconds = per_test_seconds(report)
    files = {
        test.split("::", 1)[0]
        for test, took in per_test_seconds(report, ("setup",)).items()
        if took >= threshold
    }
    tests = {
        test
        for test, took in seconds.items()
        if took >= threshold and test.split("::", 1)[0] not in files
    }
    return sorted(files | tests)


def is_listed(test: str, listed: frozenset[str]) -> bool:
    """Whether ``test`` (a node id) is in the list, by itself or by its file."""
    return test in listed or test.split("::", 1)[0] in listed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path, help="pytest output with --durations=0")
    parser.add_argument("--threshold", type=float, default=1.0, help="seconds (default 1.0)")
    parser.add_argument("--note", default="", help="the machine and its load, for the header")
    args = parser.parse_args()
    report = args.report.read_text(encoding="utf-8")
    seconds = per_test_seconds(report)
    if not seconds:
        parser.error(f"{args.report}: no durations lines (run pytest with --durations=0)")
    chosen = heavy(report, args.threshold)
    header = [
        "# Tests `make check` leaves out (`make test` runs them): each took at least "
        f"{args.threshold:g} s",
        f"# (setup + call + teardown). Measured: {args.note or 'no note given'}.",
        "# Rewrite with scripts/heavy_tests.py (its docstring says how).",
    ]
    LIST.write_text("\n".join(header + chosen) + "\n", encoding="utf-8")
    listed = frozenset(chosen)
    kept = sum(took for test, took in seconds.items() if not is_listed(test, listed))
    print(f"{len(chosen)} entries listed; the tests left took {kept:.0f} s in all")


if __name__ == "__main__":
    main()
