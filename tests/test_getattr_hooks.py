"""No optional member of an extension point is probed by name (issue 41: every hook a
provider, system, call agent, caller, perturbation or protocol may offer is declared in its
contract, so mypy checks the call sites and a contributor reads one place).

The test finds every ``getattr(obj, "name", ...)`` and ``hasattr(obj, "name")`` with a literal
name in src/voxeval. Each one left must be listed below with the reason it is not a hook
between our own layers: the object belongs to a third-party library or the standard library,
or the probe sits inside the wrapper that forwards to what it wraps. Probes with a computed
name (dataclass field loops, a visitor's dispatch) are not hooks and are not counted.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable
from pathlib import Path

import voxeval
from tests.source_trees import parsed_modules

SOURCE = Path(voxeval.__file__).parent

# (module path relative to src/voxeval, probed name) -> why it is not a hook of ours.
NOT_HOOKS: dict[tuple[str, str], str] = {
    ("benchmarks/tools/tool_spec.py", "__module__"): "a plugin function's own module (stdlib)",
    ("config.py", "CSafeLoader"): "PyYAML built without libyaml has no C loader",
    ("plain_files.py", "O_BINARY"): "os flag that exists on Windows only",
    ("plain_files.py", "O_CLOEXEC"): "os flag missing on some platforms",
    ("providers/llm/llm_gguf.py", "close"): "llama_cpp.Llama gained close() in later versions",
    ("redaction.py", "_data"): "os.environ's private store, read to redact the environment",
    ("registry.py", "__path__"): "a module is a package only when it has __path__",
    ("registry.py", "__qualname__"): "registered objects are compared by qualified name",
    ("systems/live/pipecat_link.py", "_client"): "a Pipecat service's HTTP client",
    ("systems/live/pipecat_link.py", "processors"): "a Pipecat pipeline's children",
    ("systems/live/pipecat_link.py", "time"): "a Pipecat module that imported time",
}


def literal_probes(tree: ast.AST, nodes: Iterable[ast.AST] | None = None) -> list[tuple[str, int]]:
    """``(name, line)`` of every getattr/hasattr call whose attribute name is a literal
    (``nodes``: the tree's nodes when they are already listed)."""
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree) if nodes is None else nodes:
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"getattr", "hasattr"}
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            found.append((node.args[1].value, node.lineno))
    return found


@functools.cache
def all_probes() -> dict[tuple[str, str], list[int]]:
    probes: dict[tuple[str, str], list[int]] = {}
    for parsed in parsed_modules(SOURCE):  # parsed once per test process
        for name, line in literal_probes(parsed.tree, parsed.nodes):
            probes.setdefault((parsed.module, name), []).append(line)
    return probes


def test_the_finder_sees_literal_probes_and_skips_computed_ones() -> None:
    tree = ast.parse(
        "getattr(a, 'x', None)\n"
        "hasattr(b, 'y')\n"
        "getattr(c, name)\n"
        "callable(getattr(d, 'z', None))\n"
        "obj.getattr(e, 'w')\n"
    )
    assert sorted(literal_probes(tree)) == [("x", 1), ("y", 2), ("z", 4)]


def test_no_extension_point_member_is_probed_by_name() -> None:
    probes = all_probes()
    unexplained = {
        f"{module}:{lines[0]} {name!r}": lines
        for (module, name), lines in probes.items()
        if (module, name) not in NOT_HOOKS
    }
    assert not unexplained, (
        "declare these members in the extension point's contract (a base class or Protocol) "
        "and read them directly, or list them in NOT_HOOKS with the reason: "
        + ", ".join(sorted(unexplained))
    )


def test_every_listed_exception_still_exists() -> None:
    probes = all_probes()
    stale = sorted(
        f"{module} {name!r}" for module, name in NOT_HOOKS if (module, name) not in probes
    )
    assert not stale, f"remove these entries from NOT_HOOKS, the probe is gone: {stale}"
