"""The rendered queries a single-turn run plays: one per (query, speaker profile, condition).

A suite whose queries all come with recordings runs as is (condition ``clean``, item id = query
id) unless the config asks for building (``build:`` options or noisy ``conditions:``).
Otherwise the builder renders the suite into ``build.dir`` (default ``<run>/suite``); it is
idempotent, so a resumed run reuses the rendered audio.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voxeval.benchmarks.query_suite import load_query_suite
from voxeval.benchmarks.spoken_query import SpokenQuery
from voxeval.errors import ConfigError

if TYPE_CHECKING:
    from voxeval.runner.context import RunContext

BUILD_DIR = "suite"


@dataclass(frozen=True)
class RenderedQuery:
    item_id: str
    query: SpokenQuery
    condition: str
    audio_path: Path
    meta: dict[str, Any] = field(default_factory=dict)


def build_dir(ctx: RunContext) -> Path:
    configured = ctx.config.build.get("dir")
    return Path(configured) if configured else ctx.store.run_dir / BUILD_DIR


def _recorded(queries: list[SpokenQuery]) -> list[RenderedQuery]:
    return [
        RenderedQuery(q.id, q, q.condition or "clean", Path(str(q.audio)), {"source": "recorded"})
        for q in queries
    ]


def _needs_build(ctx: RunContext, queries: list[SpokenQuery]) -> bool:
    options = {k: v for k, v in ctx.config.build.items() if k != "dir"}
    noisy = any(c != "clean" for c in ctx.config.conditions or ())
    return bool(options) or noisy or any(q.audio is None for q in queries)


def _from_built(built: Any) -> list[RenderedQuery]:
    """Adapt the builder's manifest entries to ``RenderedQuery``."""
    out = []
    for entry in built.items:
        meta = dict(getattr(entry, "meta", None) or {})
        for name in ("speaker", "voice", "profile", "noise"):
            value = getattr(entry, name, None)
            if value is not None and name not in meta:
                meta[name] = value if isinstance(value, str | int | float) else str(value)
        out.append(
            RenderedQuery(
                item_id=entry.id,
                query=entry.query,
                condition=entry.condition,
                audio_path=Path(entry.audio),
                meta=meta,
            )
        )
    return out


def load_rendered_queries(ctx: RunContext, *, build: bool = True) -> list[RenderedQuery]:
    """The run's rendered queries; renders the suite first when needed and ``build``."""
    queries = load_query_suite(ctx.config.suite)
    if not _needs_build(ctx, queries):
        return _recorded(queries)
    from voxeval.benchmarks.build import build_suite, load_built_suite

    out = build_dir(ctx)
    if not build:
        return _from_built(load_built_suite(out))
    options = {k: v for k, v in ctx.config.build.items() if k != "dir"}
    try:
        built = build_suite(
            ctx.config.suite,
            out,
            options=options,
            conditions=ctx.config.conditions,
            seed=ctx.seed,
            console=ctx.console,
        )
    except TypeError as exc:
        raise ConfigError(f"config build: {exc}") from exc
    return _from_built(built)
