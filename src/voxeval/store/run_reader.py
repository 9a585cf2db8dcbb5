"""The one reader of a run folder: run.yaml, the suite, the index, every unit's record and
scores, the comparisons and report/summary.json, each as its typed model from
``voxeval.runformat``. The report, compare, leaderboard, the viewer, the rater app and the
runner (``open_run``) open runs through it.

Opening reads; it never creates or changes anything in the folder: a path that is not a run
folder is refused before ``RunStore`` (which makes one) is touched, and unit folders are
located, not made. A file that does not have its model's shape is an ``ArtifactFormatError``
naming the file and the field."""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path

from voxeval.benchmarks.suite_info import SuiteInfo, resolve_suite, stored_suite
from voxeval.errors import ConfigError
from voxeval.runformat import (
    COMPARISONS_DIR,
    DIALOGUE_FAULT_FILE,
    FORMAT_VERSION,
    RECORD_FILES,
    SCORES_FILE,
    SUMMARY_FILE,
    ArtifactFormatError,
    ComparisonFile,
    DialogueFaultFile,
    RunManifest,
    RunSummary,
    UnitRecordFile,
    UnitScores,
    read_json_artifact,
    read_yaml_artifact,
)
from voxeval.store import layout
from voxeval.store.records import ScoreRow, UnitLike, UnitRecord
from voxeval.store.run_store import INDEX_URL_ENV, RunStore


def read_manifest(path: Path) -> RunManifest:
    """``run.yaml`` of the run folder ``path``; a ``ConfigError`` names the folder when it
    is not a run, an ``ArtifactFormatError`` the file and field when run.yaml is malformed
    or of a newer format than this voxeval reads."""
    run_file = path / layout.RUN_FILE
    if not run_file.is_file():
        raise ConfigError(f"{path}: not a voxeval run folder (no {layout.RUN_FILE} with a run_id)")
    manifest = read_yaml_artifact(RunManifest, run_file)
    assert manifest is not None  # the file exists
    if manifest.format_version > FORMAT_VERSION:
        raise ArtifactFormatError(
            f"{run_file}: format_version: {manifest.format_version} is newer than this "
            f"voxeval reads ({FORMAT_VERSION}); upgrade voxeval to open this run"
        )
    return manifest


def index_url(run_dir: Path, recorded: str | None) -> str | None:
    """The index to read a run from without creating one: ``VOXEVAL_INDEX_URL`` for a run
    whose index lives in a shared database (its run.yaml records a URL), else
    ``index.sqlite`` when it exists (None otherwise)."""
    if recorded:
        return os.environ.get(INDEX_URL_ENV) or None
    path = run_dir / layout.INDEX_FILE
    return f"sqlite:///{path}" if path.is_file() else None


def read_summary(run_dir: Path) -> RunSummary | None:
    """``report/summary.json`` of ``run_dir`` (None before the first report)."""
    return read_json_artifact(RunSummary, run_dir / layout.REPORT_DIR / SUMMARY_FILE)


class RunReader:
    """An existing run folder opened for reading."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.manifest = read_manifest(self.path)

    @property
    def run_file(self) -> Path:
        return self.path / layout.RUN_FILE

    @property
    def run_id(self) -> str:
        return self.manifest.run_id

    @property
    def format_version(self) -> int:
        """The folder's format (1 for folders written before the field existed)."""
        return self.manifest.format_version

    def config_data(self) -> dict[str, object]:
        """The resolved config as run.yaml recorded it (scrubbed)."""
        if self.manifest.config is None:
            raise ArtifactFormatError(
                f"{self.run_file}: config: missing; is this a complete voxeval run folder?"
            )
        return dict(self.manifest.config)

    @cached_property
    def suite(self) -> SuiteInfo:
        """The suite the run used: the copy kept in the folder, else the one its config
        names (a registered name or a path)."""
        copy = stored_suite(self.path)
        if copy is not None:
            return copy
        ref = self.manifest.config_field("suite")
        if not isinstance(ref, str):
            raise ArtifactFormatError(
                f"{self.run_file}: config.suite: missing; cannot tell the suite"
            )
        return resolve_suite(ref, run_dir=self.path)

    @property
    def protocol(self) -> str:
        return self.suite.protocol

    @property
    def index_url(self) -> str | None:
        """Where the run's index can be read (None when it has none yet)."""
        return index_url(self.path, self.manifest.index_url)

    @cached_property
    def store(self) -> RunStore:
        """The run's index (opened once; it is where units and score rows live)."""
        return RunStore(self.path)

    def units(self, status: str | None = None) -> list[UnitRecord]:
        return self.store.units.records(status)

    def score_rows(self) -> list[ScoreRow]:
        """Score rows of the done units (system faults included, scored as failures)."""
        return self.store.scores.load()

    def systems(self) -> list[str]:
        """The config's systems, in its order."""
        return self.manifest.system_names()

    def unit_dir(self, unit: UnitLike) -> Path:
        """A unit's folder (not created when missing)."""
        return self.path / layout.unit_relpath(
            unit.item_id, unit.system, unit.trial, unit.condition
        )

    def unit_scores(self, unit: UnitLike) -> UnitScores | None:
        """The unit's ``scores.json`` (None before it was scored)."""
        return read_json_artifact(UnitScores, self.unit_dir(unit) / SCORES_FILE)

    def unit_record(self, unit: UnitLike) -> UnitRecordFile | None:
        """What the protocol stored for the unit: ``reply.json``, ``dialogue.json`` or
        ``call.json`` (None before the unit ran; ``ArtifactFormatError`` for a protocol
        without a record file in this format)."""
        known = RECORD_FILES.get(self.protocol)
        if known is None:
            raise ArtifactFormatError(
                f"{self.run_file}: suite: protocol {self.protocol!r} has no unit record in "
                f"format {self.format_version}"
            )
        name, model = known
        return read_json_artifact(model, self.unit_dir(unit) / name)

    def dialogue_fault(self, unit: UnitLike) -> DialogueFaultFile | None:
        """A multi-turn unit's ``system_fault.json`` (None when the system did not fail)."""
        return read_json_artifact(DialogueFaultFile, self.unit_dir(unit) / DIALOGUE_FAULT_FILE)

    def comparisons(self, step: str | None = None) -> list[ComparisonFile]:
        """The stored comparison files, of one step or all, by step then file name."""
        root = self.path / COMPARISONS_DIR
        folders = [root / layout.safe_name(step)] if step else sorted(root.glob("*"))
        found = []
        for folder in folders:
            for file in sorted(folder.glob("*.json")) if folder.is_dir() else []:
                parsed = read_json_artifact(ComparisonFile, file)
                if parsed is not None:
                    found.append(parsed)
        return found

    @property
    def summary_file(self) -> Path:
        return self.path / layout.REPORT_DIR / SUMMARY_FILE

    def summary(self) -> RunSummary | None:
        """``report/summary.json`` (None before the first report)."""
        return read_summary(self.path)
