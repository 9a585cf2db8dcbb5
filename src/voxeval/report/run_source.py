"""One finished run folder as comparisons and leaderboards read it: its identity and provenance
(from run.yaml and the suite copy), its score rows and units (from the index), and how its
items group into the protocol's independent unit.

Opening a run here never creates or changes anything in its folder: a path that is not a run
folder is refused before ``RunStore`` (which would create one) is touched.
"""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from voxeval.analysis.aggregate import standard_summary
from voxeval.analysis.bootstrap import Stat
from voxeval.benchmarks.suite_info import SuiteInfo, definition_files
from voxeval.config import load_yaml
from voxeval.errors import ConfigError, VoxevalError
from voxeval.json_types import JSONReadValue
from voxeval.protocols.single_turn_summary import query_id_from_item
from voxeval.report.writer import SCORES_CSV
from voxeval.runformat.base import StoredJson
from voxeval.store import RunReader, RunStore, ScoreRow, layout
from voxeval.store.records import UnitRecord

# The independent unit of each protocol (docs/runs.md#statistics); others: the item.
CLUSTER_UNITS = {"single_turn": "query", "live_call": "scenario", "multi_turn": "dialogue"}


def cluster_function(
    protocol: str, query_ids: Mapping[str, str] | None = None
) -> Callable[[str, str], str]:
    """``(item_id, condition) -> independent unit``: single-turn items of one query (all its
    voices and conditions) form one unit (``query_ids`` first, then the item id's query
    part); in the other protocols an item is its own unit."""
    if protocol == "single_turn":
        known = query_ids or {}
        return lambda item_id, condition: (
            known.get(item_id) or query_id_from_item(item_id, condition)
        )
    return lambda item_id, _condition: item_id


def stored_query_ids(run_dir: Path) -> dict[str, str]:
    """Item id -> query id from the run's ``report/scores.csv`` (the rendered suite's
    manifest as the run read it); empty when the file or the column is missing."""
    path = run_dir / layout.REPORT_DIR / SCORES_CSV
    if not path.is_file():
        return {}
    with path.open(encoding="utf-8", newline="") as handle:
        return {
            row["item_id"]: row["query_id"]
            for row in csv.DictReader(handle)
            if row.get("item_id") and row.get("query_id")
        }


def suite_version(info: SuiteInfo) -> str:
    """The suite file's ``version:`` when it declares one, else ``sha256:`` + the start of a
    hash over the bytes of its definition files (suite file, tools, scenarios), so two runs
    of an edited suite are told apart even when nobody bumped a version."""
    try:
        data = load_yaml(info.path)
    except (OSError, VoxevalError):
        data = None
    if isinstance(data, dict) and data.get("version") not in (None, ""):
        return str(data["version"])
    try:
        files = definition_files(info)
    except (OSError, VoxevalError):
        return "unknown"
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.read_bytes())
        digest.update(b"\0")
    return "sha256:" + digest.hexdigest()[:12]


def _judge_name(spec: object) -> str | None:
    if not spec:
        return None
    if isinstance(spec, str):
        return spec
    if isinstance(spec, Mapping):
        provider, model = spec.get("provider"), spec.get("model")
        return f"{provider}:{model}" if model else str(provider)
    return str(spec)


@dataclass
class RunSource:
    """A run folder opened for reading (``open_run_source``), through ``RunReader``."""

    reader: RunReader
    suite_version: str

    @property
    def path(self) -> Path:
        return self.reader.path

    @property
    def run_id(self) -> str:
        return self.reader.run_id

    @property
    def suite(self) -> SuiteInfo:
        return self.reader.suite

    @property
    def store(self) -> RunStore:
        return self.reader.store

    @property
    def config(self) -> StoredJson:
        """run.yaml's config, as recorded."""
        return dict(self.reader.manifest.config or {})

    @property
    def seed(self) -> int:
        manifest = self.reader.manifest
        seed = manifest.seed if manifest.seed is not None else manifest.config_field("seed")
        return int(seed) if isinstance(seed, int) else 0

    @property
    def judge(self) -> str | None:
        return _judge_name(self.reader.manifest.config_field("judge"))

    @property
    def audio_judge(self) -> str | None:
        return _judge_name(self.reader.manifest.config_field("audio_judge"))

    @property
    def voxeval_version(self) -> str:
        return self.reader.manifest.voxeval_version or "unknown"

    @property
    def commit(self) -> str | None:
        return self.reader.manifest.commit

    @property
    def date(self) -> str | None:
        return self.reader.manifest.date

    @property
    def protocol(self) -> str:
        return self.suite.protocol

    @property
    def cluster_unit(self) -> str:
        return CLUSTER_UNITS.get(self.protocol, "item")

    @cached_property
    def _cluster_function(self) -> Callable[[str, str], str]:
        query_ids = stored_query_ids(self.path) if self.protocol == "single_turn" else None
        return cluster_function(self.protocol, query_ids)

    def cluster_of(self, item_id: str, condition: str) -> str:
        return self._cluster_function(item_id, condition)

    def rows(self) -> list[ScoreRow]:
        """Score rows of the done units (system faults included, scored as failures)."""
        return self.reader.score_rows()

    def units(self) -> list[UnitRecord]:
        return self.reader.units()

    def systems(self) -> list[str]:
        """Systems with a unit in the run, in plan order."""
        return list(dict.fromkeys(u.system for u in self.units()))

    def provenance(self) -> dict[str, str | int | None]:
        """The fields a leaderboard row or a comparison names the run by."""
        return {
            "run_id": self.run_id,
            "suite": self.suite.name,
            "suite_version": self.suite_version,
            "protocol": self.protocol,
            "judge": self.judge,
            "audio_judge": self.audio_judge,
            "seed": self.seed,
            "voxeval_version": self.voxeval_version,
            "commit": self.commit,
            "date": self.date,
        }

    def overall(
        self, metrics: Sequence[str], rows: Sequence[ScoreRow] | None = None
    ) -> dict[str, dict[str, Stat]]:
        """``{system: {metric: stat}}``: each system's overall statistic computed as the run's
        summary computes it (same clusters, rate detection over the whole run, run seed)."""
        rows = self.rows() if rows is None else list(rows)
        clusters = {r.item_id: self.cluster_of(r.item_id, r.condition) for r in rows}
        summary = standard_summary(
            rows, list(metrics), seed=self.seed, clusters=clusters, cluster_unit=self.cluster_unit
        )
        return {system: dict(entry["overall"]) for system, entry in summary.items()}


def open_run_source(path: Path | str) -> RunSource:
    """Open an existing run folder; a ``ConfigError`` names the folder when it is not one."""
    reader = RunReader(path)
    return RunSource(reader=reader, suite_version=suite_version(reader.suite))


def check_same_suite(runs: Sequence[RunSource]) -> list[str]:
    """Refuse runs of different suites or protocols (``ConfigError`` naming the runs); return
    warnings for differences that make a comparison weaker but not meaningless: another
    suite version, seed or judge than the first run."""
    first = runs[0]
    seen: dict[str, Path] = {}
    for run in runs:
        if run.run_id in seen:
            raise ConfigError(f"{run.path}: the same run as {seen[run.run_id]} ({run.run_id})")
        seen[run.run_id] = run.path
    for run in runs[1:]:
        if (run.suite.name, run.protocol) != (first.suite.name, first.protocol):
            raise ConfigError(
                f"{run.path}: suite {run.suite.name!r} ({run.protocol}) differs from "
                f"{first.path}: suite {first.suite.name!r} ({first.protocol}); only runs of "
                "the same suite can be compared"
            )
    warnings = []
    for run in runs[1:]:
        for field, label in (
            ("suite_version", "suite version"),
            ("seed", "seed"),
            ("judge", "judge"),
            ("audio_judge", "audio judge"),
        ):
            mine, theirs = getattr(run, field), getattr(first, field)
            if mine != theirs:
                warnings.append(
                    f"{run.run_id}: {label} {mine!r} differs from {first.run_id}'s {theirs!r}"
                )
        warnings += settings_differences(first, run)
    return warnings


# The run settings that decide how replies are scored: a change makes score deltas partly
# the scorer's, not the systems'.
SCORING_SETTINGS = ("judge", "audio_judge", "asr", "mos", "language_id", "metrics", "scoring")


def _flat(value: JSONReadValue, prefix: str = "") -> dict[str, JSONReadValue]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}``; lists and scalars are leaves, and an empty
    mapping adds nothing (the same as the setting left out)."""
    if isinstance(value, Mapping):
        out: dict[str, JSONReadValue] = {}
        for key, inner in value.items():
            out.update(_flat(inner, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}


def _changed(mine: JSONReadValue, theirs: JSONReadValue) -> list[str]:
    a, b = _flat(mine), _flat(theirs)
    return sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))


def settings_differences(first: RunSource, run: RunSource) -> list[str]:
    """Warnings naming the settings of a shared system, and the scoring settings, in which
    ``run`` differs from ``first`` (the setting names only: values may hold endpoints)."""
    out = []
    systems = {
        str(s.get("name")): {k: v for k, v in s.items() if k != "name"}
        for s in first.config.get("systems") or []
        if isinstance(s, Mapping)
    }
    for spec in run.config.get("systems") or []:
        if not isinstance(spec, Mapping) or str(spec.get("name")) not in systems:
            continue
        name = str(spec.get("name"))
        changed = _changed({k: v for k, v in spec.items() if k != "name"}, systems[name])
        if changed:
            out.append(
                f"{run.run_id}: system {name!r} is set up differently from {first.run_id}'s "
                f"(settings that differ: {', '.join(changed)}); its deltas are partly the "
                "setup's"
            )
    scoring = [
        key
        for setting in SCORING_SETTINGS
        for key in _changed(
            {setting: run.config.get(setting)}, {setting: first.config.get(setting)}
        )
    ]
    if scoring:
        out.append(
            f"{run.run_id}: scoring settings differ from {first.run_id}'s "
            f"({', '.join(scoring)}); score deltas are partly the scorer's"
        )
    return out
