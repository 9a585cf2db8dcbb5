"""Every module of a source folder parsed once per test process, for the tests that read the
whole of src/voxeval (class sizes, signature types, getattr probes, the protocol contract).

Parsing the ~500 modules takes about 4 s and one ``ast.walk`` over all of them about 1.5 s on
an idle core; these tests used to parse and walk everything once per test, up to three times
per file. The trees are shared read-only: a test must not modify them."""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

import voxeval

SOURCE = Path(voxeval.__file__).resolve().parent


@dataclass(frozen=True)
class ParsedModule:
    path: Path
    module: str  # the path relative to the parsed folder, with forward slashes
    tree: ast.Module
    nodes: tuple[ast.AST, ...]  # every node of the tree, in ``ast.walk`` order


def parsed_modules(root: Path = SOURCE) -> tuple[ParsedModule, ...]:
    """Every ``*.py`` below ``root``, sorted by path."""
    return _parsed(root.resolve())


@functools.cache
def _parsed(root: Path) -> tuple[ParsedModule, ...]:
    modules = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        module = path.relative_to(root).as_posix()
        modules.append(ParsedModule(path, module, tree, tuple(ast.walk(tree))))
    return tuple(modules)
