"""One registry for every pluggable component: providers, systems, metrics, suites, protocols.

Components register through the typed kind of their family (``Kind.register``: ``PROTOCOLS``,
``SYSTEMS``, ``ASR_PROVIDERS``..., metrics with ``@metric``; all re-exported by
``voxeval.api``); ``register(kind, name)`` below is the shared table they write to. Built-in
components live in the package
listed for their kind in ``_BUILTIN_PACKAGES`` and are imported on first lookup; third-party
plugins are modules named by the ``voxeval.plugins`` entry-point group.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

from voxeval.errors import UnknownComponent

T = TypeVar("T")

_REGISTRY: dict[str, dict[str, Any]] = {}
_loaded_packages: set[str] = set()
_plugins_loaded = False

# Importing these packages registers their built-in components (their __init__ re-exports).
_BUILTIN_PACKAGES: dict[str, tuple[str, ...]] = {
    "asr": ("voxeval.providers",),
    "tts": ("voxeval.providers",),
    "llm": ("voxeval.providers",),
    "audio_llm": ("voxeval.providers",),
    "mos": ("voxeval.providers",),
    "vad": ("voxeval.providers",),
    "system": ("voxeval.systems",),
    "metric": ("voxeval.scoring",),
    "suite": ("voxeval.benchmarks",),
    "protocol": ("voxeval.protocols",),
    "caller": ("voxeval.simulation",),
    "perturbation": ("voxeval.simulation",),
}


def register(kind: str, name: str) -> Callable[[T], T]:
    """Class/function decorator: make ``obj`` findable as ``lookup(kind, name)``."""

    def decorator(obj: T) -> T:
        table = _REGISTRY.setdefault(kind, {})
        existing = table.get(name)
        if existing is not None and existing is not obj:
            qualname = getattr(obj, "__qualname__", None)
            if qualname is None:  # a value (e.g. a suite): only an equal one may replace it
                same = existing == obj
            else:  # a class or function: re-importing its module registers it again
                same = getattr(existing, "__qualname__", None) == qualname
            if not same:
                raise ValueError(f"{kind} {name!r} is registered twice: {existing!r} and {obj!r}")
        table[name] = obj
        return obj

    return decorator


def _import_package(package: str) -> None:
    """Import ``package`` and every module below it, so a new built-in component needs no
    import line anywhere: adding its module to the package registers it."""
    module = importlib.import_module(package)
    for info in pkgutil.walk_packages(getattr(module, "__path__", []), prefix=package + "."):
        importlib.import_module(info.name)


def _ensure_loaded(kind: str) -> None:
    global _plugins_loaded
    for package in _BUILTIN_PACKAGES.get(kind, ()):
        if package not in _loaded_packages:
            _loaded_packages.add(package)
            _import_package(package)
    if not _plugins_loaded:
        _plugins_loaded = True
        for ep in entry_points(group="voxeval.plugins"):
            ep.load()


def load_all() -> None:
    """Import every built-in component package and the plugins now, not on the first lookup
    of each kind (a worker process does it before its first unit: importing them all takes
    ~0.1 s under the import lock, which would otherwise stall the units in flight)."""
    for kind in _BUILTIN_PACKAGES:
        _ensure_loaded(kind)


def lookup(kind: str, name: str) -> Any:
    """Return the component registered as ``name`` for ``kind``; error lists known names."""
    _ensure_loaded(kind)
    table = _REGISTRY.get(kind, {})
    if name not in table:
        known = ", ".join(sorted(table)) or "none"
        raise UnknownComponent(f"unknown {kind} {name!r}; known: {known}")
    return table[name]


def names(kind: str) -> list[str]:
    """Sorted names registered for ``kind``."""
    _ensure_loaded(kind)
    return sorted(_REGISTRY.get(kind, {}))


def items(kind: str) -> list[tuple[str, Any]]:
    """(name, component) pairs registered for ``kind``, sorted by name."""
    _ensure_loaded(kind)
    return sorted(_REGISTRY.get(kind, {}).items())


class Kind(Generic[T]):
    """One registry kind with the type of its components, so that a lookup is typed:
    ``METRICS: Kind[Metric] = Kind("metric")`` then ``METRICS.lookup("wer")`` is a ``Metric``.

    It shares the table of the untyped functions above (plugins may keep using
    ``register(kind, name)``), so the type is what the kind promises, not checked at runtime.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __repr__(self) -> str:
        return f"Kind({self.kind!r})"

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator: make the component findable as ``lookup(name)``."""
        return register(self.kind, name)

    def lookup(self, name: str) -> T:
        """The component registered as ``name``; ``UnknownComponent`` lists the known names."""
        found: T = lookup(self.kind, name)
        return found

    def names(self) -> list[str]:
        """Sorted names of the registered components."""
        return names(self.kind)

    def items(self) -> list[tuple[str, T]]:
        """(name, component) pairs, sorted by name."""
        return items(self.kind)
