"""The README leads with what a user does and stays short (issue 41, point 6): at most 200
lines, the two make commands first, no performance diary (commit hashes, load averages), short
protocol-table cells, and every linked doc exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def test_short_and_opens_with_the_two_commands() -> None:
    lines = README.splitlines()
    assert len(lines) <= 200
    assert lines[:6] == [
        "# voxeval",
        "",
        "```bash",
        "make quickstart   # install everything into .venv, render a spoken benchmark, "
        "evaluate the embedded assistant, write a report",
        "make test         # install the test dependencies and run lint, type checks and all tests",
        "```",
    ]
    assert lines.index("## What you do") < 20


def test_no_performance_diary() -> None:
    assert not re.search(r"\b(at|commit) [0-9a-f]{7}\b", README)
    assert "load average" not in README and "performance-log" not in README
    assert "docs/performance.md" in README


def test_protocol_table_cells_are_short() -> None:
    table = README[README.index("## Three protocols") :].split("\n\n")[1]
    cells = [c.strip() for row in table.splitlines()[2:] for c in row.strip("|").split(" | ")]
    assert len(cells) == 9
    assert max(len(c.split()) for c in cells) <= 40


def test_linked_docs_exist() -> None:
    for target in re.findall(r"\]\((docs/[^)#]+)", README):
        assert (ROOT / target).exists(), target
