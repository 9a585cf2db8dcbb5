"""Suites: a name (or path) that resolves to the protocol that runs it and its data."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

from voxeval.config import load_yaml
from voxeval.errors import ConfigError
from voxeval.registry import Kind


@dataclass(frozen=True)
class SuiteInfo:
    """``path`` is the suite's data file or folder; ``protocol`` names a registered protocol
    (``single_turn``, ``live_call``, ``multi_turn``)."""

    name: str
    protocol: str
    description: str
    path: Path


# Built-in and plugin suites by name.
SUITES: Kind[SuiteInfo] = Kind("suite")

SUITE_FILE = "suite.yaml"
# A run folder keeps a copy of its suite's definition files here (see ``save_suite_copy``).
SUITE_COPY_DIR = "suite"
SUITE_COPY_INFO = "suite.json"


def resolve_suite(ref: str, *, run_dir: Path | str | None = None) -> SuiteInfo:
    """A built-in/registered suite name, or a path to a suite YAML file or to a folder
    containing ``suite.yaml``. Suite files declare ``protocol:`` at top level.

    With ``run_dir``, a suite that no longer resolves (moved or deleted since the run) is
    read from the copy the run kept of it."""
    if run_dir is not None:
        try:
            return resolve_suite(ref)
        except ConfigError:
            stored = stored_suite(run_dir)
            if stored is None:
                raise
            return stored
    if ref in SUITES.names():
        return SUITES.lookup(ref)
    path = Path(ref)
    if path.is_dir():
        path = path / SUITE_FILE
    if not path.exists():
        known = ", ".join(SUITES.names()) or "none"
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
    return [info for _, info in SUITES.items()]


def definition_files(info: SuiteInfo) -> list[Path]:
    """The suite file and the definition files it points to (a live-call suite's tool library
    and scenario files). Datasets and recordings are not definition files."""
    files = [info.path]
    data = load_yaml(info.path)
    if not isinstance(data, dict):
        return files
    refs: list[str] = [data[k] for k in ("domain", "tools") if isinstance(data.get(k), str)]
    scenarios = data.get("scenarios")
    if isinstance(scenarios, str):
        refs.append(scenarios)
    elif isinstance(scenarios, list):
        refs += [entry for entry in scenarios if isinstance(entry, str)]
    for ref in refs:
        target = info.path.parent / ref
        if target.is_dir():
            files += sorted(target.glob("*.y*ml"))
        elif target.is_file():
            files.append(target)
    return list(dict.fromkeys(f.resolve() for f in files))


def save_suite_copy(info: SuiteInfo, run_dir: Path | str) -> Path:
    """Copy ``info``'s definition files into ``<run_dir>/suite/`` (relative layout kept, the
    suite file's folder name too) so the run folder is self-contained; returns the copy's
    suite file. The previous copy is replaced."""
    files = definition_files(info)
    root = Path(os.path.commonpath([f.parent for f in files]))
    target = Path(run_dir) / SUITE_COPY_DIR
    staging = Path(run_dir) / f".{SUITE_COPY_DIR}.{os.getpid()}.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    top = root.name or "suite"  # keeps the folder name a suite without ``name:`` is known by
    for file in files:
        dest = staging / top / file.relative_to(root)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(file, dest)
    copy_path = Path(SUITE_COPY_DIR) / top / info.path.resolve().relative_to(root)
    record = {**asdict(info), "path": str(copy_path), "source": str(info.path)}
    (staging / SUITE_COPY_INFO).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    shutil.rmtree(target, ignore_errors=True)
    os.replace(staging, target)
    return Path(run_dir) / copy_path


def stored_suite(run_dir: Path | str) -> SuiteInfo | None:
    """The suite copy kept in ``run_dir`` (None when there is none)."""
    record_path = Path(run_dir) / SUITE_COPY_DIR / SUITE_COPY_INFO
    if not record_path.is_file():
        return None
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
        return SuiteInfo(
            name=str(record["name"]),
            protocol=str(record["protocol"]),
            description=str(record.get("description", "")),
            path=Path(run_dir) / str(record["path"]),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{record_path}: unreadable suite copy record ({exc})") from exc
