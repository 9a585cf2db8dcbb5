"""The runs the viewer shows: the folders named on the command line, or every run folder
directly under ``--root``; each with what run.yaml and report/summary.json say about it. A
run's summary is parsed again only when its file changes."""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from voxeval.runformat import SUMMARY_FILE, ArtifactFormatError, RunSummary
from voxeval.store import layout
from voxeval.store.run_reader import index_url, read_manifest, read_summary
from voxeval.store.run_store import is_run_folder
from voxeval.viewer.run_index import RunIndex

REPORT_HTML = "index.html"
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class RunInfo:
    """What the runs list and a run's pages show about one run folder."""

    slug: str
    path: Path
    run_id: str
    suite: str
    protocol: str
    created: str
    seed: int | None
    commit: str
    dirty: bool
    systems: tuple[str, ...]
    recorded_index_url: str | None  # a shared database named in run.yaml (password hidden)
    problem: str | None = None  # run.yaml or summary.json not of the run format

    @property
    def has_report(self) -> bool:
        return (self.path / layout.REPORT_DIR / REPORT_HTML).is_file()

    @property
    def index_url(self) -> str | None:
        """Looked up on each use: the index appears when a run starts after the viewer."""
        return index_url(self.path, self.recorded_index_url)


def discover(runs: Sequence[Path], root: Path | None) -> list[Path]:
    """The run folders to show, newest first (by the last write of their run file): ``runs``
    when given (each must be a run; a folder named twice is shown once), else the folders
    under ``root`` (and ``root`` itself when it is a run)."""
    if runs:
        found = list(dict.fromkeys(Path(r).resolve() for r in runs))
    elif root is None or not root.is_dir():
        return []
    else:
        found = [root] if is_run_folder(root) else []
        found += [p for p in root.iterdir() if p.is_dir() and is_run_folder(p)]
    return sorted((p.resolve() for p in found), key=lambda p: (-run_file_mtime(p), p.name.lower()))


def run_file_mtime(path: Path) -> float:
    """When the run's run.yaml was last written (0 when it cannot be read)."""
    try:
        return (path / layout.RUN_FILE).stat().st_mtime
    except OSError:
        return 0.0


def _slug(path: Path, taken: set[str]) -> str:
    base = _SLUG.sub("-", path.name).strip("-.") or "run"
    slug, n = base, 2
    while slug in taken:
        slug, n = f"{base}-{n}", n + 1
    taken.add(slug)
    return slug


class Catalog:
    """Run folders by slug, their summaries (cached by file mtime) and their open indexes."""

    def __init__(self, runs: Sequence[Path], root: Path | None) -> None:
        self.runs = [Path(r) for r in runs]
        self.root = root
        self._lock = threading.RLock()  # scan() reads summaries under the same lock
        self._infos: dict[str, RunInfo] = {}
        self._stamps: dict[Path, float] = {}
        self._summaries: dict[Path, tuple[float, RunSummary]] = {}
        self._indexes: dict[Path, RunIndex] = {}

    def scan(self) -> list[RunInfo]:
        """Look at the folders again (new runs appear under ``--root``)."""
        paths = discover(self.runs, self.root)
        with self._lock:
            known = {info.path: info for info in self._infos.values()}
            taken: set[str] = set()
            infos: dict[str, RunInfo] = {}
            for path in paths:
                stamp = run_file_mtime(path)
                old = known.get(path)
                if old is not None and self._stamps.get(path) == stamp:
                    taken.add(old.slug)
                    infos[old.slug] = old
            for path in paths:
                if any(i.path == path for i in infos.values()):
                    continue
                info = self._read(path, _slug(path, taken))
                self._stamps[path] = run_file_mtime(path)
                infos[info.slug] = info
            order = {p: n for n, p in enumerate(paths)}
            self._infos = dict(sorted(infos.items(), key=lambda kv: order[kv[1].path]))
            return list(self._infos.values())

    def get(self, slug: str) -> RunInfo | None:
        with self._lock:
            info = self._infos.get(slug)
        if info is None:
            self.scan()
            with self._lock:
                info = self._infos.get(slug)
        return info

    def _read(self, path: Path, slug: str) -> RunInfo:
        """What run.yaml and summary.json say; a file not of the run format is shown as the
        run's problem (naming the file and field), never hidden."""
        try:
            manifest = read_manifest(path)
            summary = self.summary(path)
        except ArtifactFormatError as error:
            return RunInfo(slug, path, path.name, "", "", "", None, "", False, (), None, str(error))
        git = manifest.environment.git if manifest.environment is not None else None
        suite = summary.suite.name if summary is not None else manifest.config_field("suite")
        return RunInfo(
            slug=slug,
            path=path,
            run_id=manifest.run_id,
            suite=str(suite or ""),
            protocol=summary.suite.protocol if summary is not None else "",
            created=manifest.date or "",
            seed=manifest.seed,
            commit=str(git.commit or "")[:12] if git is not None else "",
            dirty=bool(git is not None and git.dirty),
            systems=tuple(manifest.system_names()),
            recorded_index_url=manifest.index_url,
        )

    def summary(self, path: Path) -> RunSummary | None:
        """report/summary.json of the run (None when there is none yet); parsed again only
        when the file changed. ``ArtifactFormatError`` names the file and field of a
        summary not of the run format."""
        file = path / layout.REPORT_DIR / SUMMARY_FILE
        try:
            stamp = file.stat().st_mtime
        except OSError:
            return None
        with self._lock:
            cached = self._summaries.get(path)
            if cached is not None and cached[0] == stamp:
                return cached[1]
        summary = read_summary(path)
        if summary is None:
            return None
        with self._lock:
            self._summaries[path] = (stamp, summary)
        return summary

    def index(self, info: RunInfo) -> RunIndex | None:
        """The run's open index, or None when it has none (yet)."""
        url = info.index_url
        if url is None:
            return None
        with self._lock:
            index = self._indexes.get(info.path)
            if index is None:
                index = RunIndex(url, info.run_id)
                self._indexes[info.path] = index
            return index

    def close(self) -> None:
        with self._lock:
            for index in self._indexes.values():
                index.dispose()
            self._indexes.clear()
