"""The call engine is split along its responsibilities (issue 41: no class more than 25
methods): every class in voxeval.simulation stays within 25 methods of its own or inherited
from voxeval classes, and the engine's modules stay small."""

from __future__ import annotations

import ast
from pathlib import Path

import voxeval.simulation

SIMULATION = Path(voxeval.simulation.__file__).parent
MAX_METHODS = 25
MAX_LINES = 500


def _classes() -> dict[str, tuple[list[str], list[str]]]:
    """Every class in the package: (its own methods, the names of its bases)."""
    found: dict[str, tuple[list[str], list[str]]] = {}
    for path in sorted(SIMULATION.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                methods = [
                    n.name
                    for n in node.body
                    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                ]
                bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
                found[f"{path.relative_to(SIMULATION)}:{node.name}"] = (methods, bases)
    return found


def test_no_class_has_more_than_25_methods() -> None:
    classes = _classes()
    by_name = {key.split(":")[1]: value for key, value in classes.items()}

    def methods(name: str, seen: frozenset[str] = frozenset()) -> set[str]:
        own, bases = by_name[name]
        inherited = set().union(
            *(methods(b, seen | {name}) for b in bases if b in by_name and b not in seen)
        )
        return set(own) | inherited

    sizes = {key: len(methods(key.split(":")[1])) for key in classes}
    assert {k: n for k, n in sizes.items() if n > MAX_METHODS} == {}
    # the call loop itself keeps only the line's events and the loop
    assert sizes["call_engine/live_call.py:LiveCall"] <= 15


def test_the_engine_modules_are_small() -> None:
    for path in [SIMULATION / "engine.py", *sorted((SIMULATION / "call_engine").glob("*.py"))]:
        lines = len(path.read_text(encoding="utf-8").splitlines())
        assert lines < MAX_LINES, f"{path.name}: {lines} lines"
