"""Issue #41: the contract package and the protocols name real types in their signatures.
The functions still left with ``Any`` are listed by name (each needs a change in a package
that calls it); this test fails when another one appears."""

from __future__ import annotations

import ast
from pathlib import Path

import voxeval

# module -> functions whose signature still says Any, and why
ALLOWED = {
    # their callers in voxeval.cli.commands_analyze index the results as dict[str, Any]
    "protocols/arena/judgements.py": {"analyze_bias", "analyze_agreement"},
    "protocols/caller_timing_report.py": {"run_caller_timing"},
}


def any_in_signatures(package: str) -> dict[str, set[str]]:
    root = Path(voxeval.__file__).parent
    found: dict[str, set[str]] = {}
    for path in sorted((root / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            args = node.args
            notes = [a.annotation for a in args.posonlyargs + args.args + args.kwonlyargs]
            notes += [args.vararg and args.vararg.annotation, args.kwarg and args.kwarg.annotation]
            notes.append(node.returns)
            names = {
                n.id
                for note in notes
                if note is not None
                for n in ast.walk(note)
                if isinstance(n, ast.Name)
            }
            if names & {"Any", "object"}:
                found.setdefault(str(path.relative_to(root)), set()).add(node.name)
    return found


def test_api_and_protocols_signatures_name_real_types() -> None:
    found = {**any_in_signatures("api"), **any_in_signatures("protocols")}
    assert found == ALLOWED
