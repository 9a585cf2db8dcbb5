"""Suites: a name (or path) that resolves to the protocol that runs it and its data."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from voxeval.config import load_yaml
from voxeval.errors import ConfigError
from voxeval.registry import items, lookup, names


@dataclass(frozen=True)
class SuiteInfo:
    """``path`` is the suite's data file or folder; ``protocol`` names a registered protocol
    (``single_turn``, ``live_call``, ``multi_turn``)."""

    name: str
    protocol: str
    description: str
    path: Path


SUITE_FILE = "suite.yaml"


def resolve_suite(ref: str) -> SuiteInfo:
    """A built-in/registered suite name, or a path to a suite YAML file or to a folder
    containing ``suite.yaml``. Suite files declare ``protocol:`` at top level."""
    if ref in names("suite"):
        info: SuiteInfo = lookup("suite", ref)
        return info
    path = Path(ref)
    if path.is_dir():
        path = path / SUITE_FILE
    if not path.exists():
        known = ", ".join(names("suite")) or "none"
        raise ConfigError(
            f"suite {ref!r} is neither a built-in suite ({known}) nor an existing path"
        )
    data = load_yaml(path)
    if not isinstance(data, dict) or not isinstance(data.get("protocol"), str):
        raise ConfigError(f"{path}: a suite file needs a top-level 'protocol' field")
    return SuiteInfo(
        name=str(data.get("name") or path.parent.name),
        protocol=data["protocol"],
        description=str(data.get("description", "")),
        path=path,
    )


def list_suites() -> list[SuiteInfo]:
    return [info for _, info in items("suite")]
