"""The manifest of a built suite: one JSON line per rendered item, and the jobs behind it.

Each entry records every choice made while rendering (voice, transform, noise source and
offset, ratio/SNR, seeds, durations) plus the embedded query, so a built folder is
self-contained: ``load_built_suite(DIR)`` needs nothing else.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voxeval.benchmarks.build_options import BuildOptions, profile_label
from voxeval.benchmarks.render_log import read_render_log
from voxeval.benchmarks.wildspeech.spoken_query import OPEN_CATEGORIES, SpeakerSpec, SpokenQuery
from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject, JSONReadObject

MANIFEST = "manifest.jsonl"


@dataclass(frozen=True)
class RenderJob:
    query: SpokenQuery
    profile: SpeakerSpec
    condition: str

    @property
    def label(self) -> str:
        return profile_label(self.profile)

    @property
    def item_id(self) -> str:
        return f"{self.query.id}__{self.label}"

    @property
    def key(self) -> str:
        return f"{self.item_id}__{self.condition}"


@dataclass(frozen=True)
class RenderedQuery:
    """One built audio item: the query, who spoke it, under which condition, and where."""

    query: SpokenQuery
    profile: str
    condition: str
    audio_path: Path
    entry: dict[str, Any]

    @property
    def item_id(self) -> str:
        return str(self.entry["item_id"])

    @property
    def key(self) -> str:
        """Unique per (query, profile, condition)."""
        return str(self.entry["key"])

    @property
    def id(self) -> str:
        return self.key

    @property
    def audio(self) -> Path:
        return self.audio_path

    @property
    def voice(self) -> str:
        return str(self.entry.get("voice", ""))

    @property
    def noise(self) -> str | None:
        noise = self.entry.get("noise")
        return str(noise.get("label")) if isinstance(noise, dict) else None

    @property
    def meta(self) -> JSONObject:
        """The manifest entry without the embedded query."""
        return {k: v for k, v in self.entry.items() if k != "query"}


@dataclass
class BuiltSuite:
    out_dir: Path
    name: str
    items: list[RenderedQuery] = field(default_factory=list)
    rendered: int = 0
    cached: int = 0
    noise: JSONObject = field(default_factory=dict)


def stable_seed(*parts: str | int) -> int:
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:4], "little")


def first_per_group(queries: list[SpokenQuery], n: int) -> list[SpokenQuery]:
    """The first ``n`` queries of each category (of each subcategory for PF), in suite order:
    a smaller suite that still covers every reporting group."""
    seen: dict[str, int] = {}
    kept = []
    for query in queries:
        group = query.report_group
        if seen.get(group, 0) < n:
            seen[group] = seen.get(group, 0) + 1
            kept.append(query)
    return kept


def plan_jobs(queries: list[SpokenQuery], options: BuildOptions) -> list[RenderJob]:
    """Every (query, profile, condition) to render, in a stable order."""
    grid = options.profile_specs()
    jobs: list[RenderJob] = []
    if options.per_category:
        queries = first_per_group(queries, options.per_category)
    for index, query in enumerate(queries[: options.limit] if options.limit else queries):
        if query.audio is not None:
            profiles = [query.speaker_profile or SpeakerSpec()]
        elif options.assign == "rotate":
            profiles = [grid[(index + options.seed) % len(grid)]]
        else:
            profiles = grid
        if query.speaker_profile is not None and query.audio is None:
            fixed = query.speaker_profile.model_dump(exclude_none=True)
            profiles = [p.model_copy(update=fixed) for p in profiles]
        conditions = options.conditions
        if query.condition:  # a fixed condition: kept when the build asks for it
            conditions = [query.condition] if query.condition in options.conditions else []
        seen: set[str] = set()
        for profile in profiles:
            label = profile_label(profile)
            if label in seen:
                continue
            seen.add(label)
            jobs.extend(RenderJob(query, profile, c) for c in conditions)
    return jobs


def read_manifest(out_dir: Path) -> dict[str, JSONObject]:
    return read_render_log(out_dir / MANIFEST, "key")


def write_manifest(out: Path, entries: Sequence[JSONReadObject]) -> None:
    tmp = out / (MANIFEST + ".part")
    tmp.write_text("".join(json.dumps(e, sort_keys=True) + "\n" for e in entries), encoding="utf-8")
    tmp.replace(out / MANIFEST)


def iter_built(out_dir: Path) -> Iterator[RenderedQuery]:
    for key, entry in read_manifest(out_dir).items():
        where = f"{out_dir / MANIFEST}: {key}"
        try:
            # categories were checked when the suite loaded (a release may keep its own)
            query = SpokenQuery.model_validate(entry["query"], context=OPEN_CATEGORIES)
        except Exception as exc:
            raise ConfigError(f"{where}: query: invalid ({exc})") from exc
        yield RenderedQuery(
            query,
            str(entry["profile"]),
            str(entry["condition"]),
            out_dir / str(entry["audio"]),
            entry,
        )


def load_built_suite(out_dir: str | Path) -> list[RenderedQuery]:
    """Every item of a built suite folder, in manifest order."""
    out = Path(out_dir)
    if not (out / MANIFEST).exists():
        raise ConfigError(f"{out}: not a built suite (no {MANIFEST}); run `voxeval build` first")
    return list(iter_built(out))
