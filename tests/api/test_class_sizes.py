"""Issue #41: no class of the contract package or the protocols holds more than 25 methods
(the run context's provider loading and the single-turn protocol's reply storage and item
catalog live in their own classes)."""

from __future__ import annotations

import ast
from pathlib import Path

import voxeval

MAX_METHODS = 25
PACKAGES = ("api", "protocols")


def method_counts(package: str) -> dict[str, int]:
    """``module.Class`` -> how many functions its body defines (overloads counted)."""
    root = Path(voxeval.__file__).parent / package
    counts: dict[str, int] = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                defs = [
                    b for b in node.body if isinstance(b, ast.FunctionDef | ast.AsyncFunctionDef)
                ]
                counts[f"{path.relative_to(root.parent)}:{node.name}"] = len(defs)
    return counts


def test_no_class_holds_more_than_25_methods() -> None:
    counts = {k: v for p in PACKAGES for k, v in method_counts(p).items()}
    assert counts["api/context.py:RunContext"] <= MAX_METHODS
    assert counts["protocols/single_turn.py:SingleTurnProtocol"] <= MAX_METHODS
    assert {k: v for k, v in counts.items() if v > MAX_METHODS} == {}
