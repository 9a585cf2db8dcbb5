"""Print every import cycle between modules of a package (type-only imports included).

Run as ``python -m tests.import_cycles PACKAGE``; exits 1 when a cycle exists. The graph comes
from grimp (import-linter's engine); the cycles are its strongly connected components."""

from __future__ import annotations

import sys

import grimp


def module_cycles(package: str) -> list[list[str]]:
    graph = grimp.build_graph(package, cache_dir=None)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        # Tarjan's algorithm; the package has a few hundred modules, recursion depth is fine
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return cycles


if __name__ == "__main__":
    found = module_cycles(sys.argv[1] if len(sys.argv) > 1 else "voxeval")
    for cycle in found:
        print("cycle: " + " <-> ".join(cycle))
    sys.exit(1 if found else 0)
