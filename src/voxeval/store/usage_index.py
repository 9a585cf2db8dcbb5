"""What a run's providers cost, read back from the index's ``usage`` and ``model_usage``
tables (the rows are written by the run's recorder, ``voxeval.store.recorder``)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from voxeval.store.index import RunIndex, model_usage_table, usage_table
from voxeval.store.shared_reads import SharedReads
from voxeval.store.unit_writes import UnitWrites
from voxeval.store.usage import MODEL_AMOUNTS, summarize_model_usage, summarize_usage

# A model_usage row: unit_key, system, component, kind, provider, model (text) and the
# amounts of ``MODEL_AMOUNTS`` (counts, seconds; None in rows older than the amount).
ModelUsageRow = dict[str, str | int | float | None]


class UsageIndex:
    """The usage rows of one run (``RunStore.usage``)."""

    def __init__(self, index: RunIndex, writes: UnitWrites, reads: SharedReads) -> None:
        self.index = index
        self.writes = writes
        self.reads = reads

    def summary(self) -> dict[str, Any]:
        """Totals, per provider and per system (see ``voxeval.store.usage``)."""
        self.writes.flush()  # rows still queued for the next commit
        t = usage_table
        with self.index.read() as conn:
            rows = conn.execute(
                select(
                    t.c.system,
                    t.c.provider,
                    t.c.calls,
                    t.c.prompt_tokens,
                    t.c.completion_tokens,
                    t.c.cost_usd,
                    t.c.parse_failures,
                    t.c.requests,
                    t.c.retries,
                    t.c.timeouts,
                    t.c.prompt_audio_tokens,
                    t.c.completion_audio_tokens,
                    t.c.audio_in_s,
                    t.c.audio_out_s,
                ).where(t.c.run_id == self.index.run_id)
            ).all()
        summary = summarize_usage(tuple(r) for r in rows)
        summary["by_model"] = summarize_model_usage(self.model_rows())
        return summary

    def model_rows(self) -> list[ModelUsageRow]:
        """Every ``model_usage`` row of the run (plan order is not kept: records append)."""
        return self.reads.read("model_usage", self._read_model_rows)

    def _read_model_rows(self) -> list[ModelUsageRow]:
        self.writes.flush()  # rows still queued for the next commit
        t = model_usage_table
        names = ("unit_key", "system", "component", "kind", "provider", "model", *MODEL_AMOUNTS)
        query = select(*(t.c[name] for name in names))
        with self.index.read() as conn:
            rows = conn.execute(query.where(t.c.run_id == self.index.run_id).order_by(t.c.id)).all()
        return [dict(zip(names, row, strict=True)) for row in rows]
