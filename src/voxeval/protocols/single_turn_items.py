"""The rendered queries a single-turn run plays: one per (query, speaker profile, condition).

The builder renders the suite (idempotently) into ``build.dir`` or ``<run>/suite_audio``, so a
resumed run reuses the audio. A rendered item's id is the builder's key
``<query id>__<profile>__<condition>``; replay folders name their files by it.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from voxeval.api.work_unit import WorkUnit
from voxeval.benchmarks.build import prepare_suite_audio
from voxeval.benchmarks.build_manifest import RenderedQuery, load_built_suite
from voxeval.benchmarks.build_options import parse_build_options
from voxeval.errors import VoxevalError

if TYPE_CHECKING:
    from pathlib import Path

    from voxeval.api.context import RunContext

DEFAULT_BUILD_DIR = "suite_audio"

__all__ = ["RenderedItems", "RenderedQuery", "build_dir", "load_rendered_queries"]


def build_dir(ctx: RunContext) -> Path:
    options = parse_build_options(ctx.config.build, "config build")
    if options.dir:
        from pathlib import Path

        return Path(options.dir)
    return ctx.store.run_dir / DEFAULT_BUILD_DIR


def load_rendered_queries(ctx: RunContext, *, build: bool = True) -> list[RenderedQuery]:
    """The run's rendered queries. With ``build`` the suite is rendered as needed (the
    run's seed, conditions and limit apply where ``build:`` leaves them unset); without,
    the already rendered folder is read (re-scoring and reports never render)."""
    if not build:
        items = load_built_suite(build_dir(ctx))
    else:
        items = prepare_suite_audio(
            ctx.config.suite,
            ctx.store.run_dir,
            ctx.config.build,
            seed=ctx.seed,
            conditions=ctx.config.conditions,
            limit=ctx.config.limit,
        ).items
    wanted = set(ctx.config.conditions or ())
    return [item for item in items if not wanted or item.condition in wanted]


class RenderedItems:
    """The rendered queries of one run by id, loaded once (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[str, RenderedQuery] | None = None

    def by_id(self, ctx: RunContext, *, build: bool = True) -> dict[str, RenderedQuery]:
        """The rendered queries by id (built on first use when ``build``)."""
        with self._lock:
            if self._items is None:
                queries = load_rendered_queries(ctx, build=build)
                self._items = {q.key: q for q in queries}
            return self._items

    def of_unit(self, ctx: RunContext, unit: WorkUnit) -> RenderedQuery:
        """The rendered query ``unit`` plays (the suite is not rendered here)."""
        item = self.by_id(ctx, build=False).get(unit.item_id)
        if item is None:
            raise VoxevalError(f"item {unit.item_id!r} is not in the rendered suite")
        return item

    def stored(self, ctx: RunContext) -> dict[str, RenderedQuery]:
        """The rendered queries, or none when the rendered suite is gone (reports still
        run, without what the items would add)."""
        try:
            return self.by_id(ctx, build=False)
        except VoxevalError:
            return {}
