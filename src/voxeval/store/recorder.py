"""What a unit records in the run's index while it runs, besides its artifacts: its attempt's
start, what its providers cost (usage and model usage rows) and the identities of the models
it used (``run.yaml``).

In a local run (and on a distributed run's driver) these go to the index (``IndexRecorder``).
A Ray or process worker never writes the index: its recorder keeps them in a journal that
travels back to the driver with the unit's scores (``voxeval.runner.unit_work``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from concurrent.futures import Future
from typing import ClassVar

from voxeval.json_types import JSONReadObject
from voxeval.providers.usage.usage_ledger import ComponentUsage
from voxeval.providers.usage.usage_meter import ModelKey, ModelUsage
from voxeval.store.batched_writes import Rows
from voxeval.store.index import RunIndex, utcnow
from voxeval.store.records import UnitLike
from voxeval.store.run_file import RunFile
from voxeval.store.unit_rows import inserting
from voxeval.store.unit_statements import INSERT_MODEL_USAGE, INSERT_USAGE, START_UNIT
from voxeval.store.unit_writes import UnitWrites
from voxeval.store.usage import MODEL_AMOUNTS, UsageValues, usage_values


class RunRecorder(ABC):
    """Where a running unit's starts, usage and model identities go."""

    # Whether a start waits on an index commit (a worker's journal appends at once).
    waits_for_commit: ClassVar[bool] = True

    @abstractmethod
    def start(self, unit: UnitLike) -> None:
        """Mark a unit ``running`` and count the attempt; returns once that is recorded."""

    @abstractmethod
    def start_later(self, unit: UnitLike) -> Future[None]:
        """``start`` whose commit may still be under way: the future completes with it. The
        unit must not call its system before then (a killed attempt must count)."""

    def record_usage(
        self,
        unit: UnitLike,
        provider: str,
        calls: int,
        prompt_tokens: int,
        completion_tokens: int,
        cost_usd: float | None,
        parse_failures: int = 0,
        *,
        requests: int = 0,
        retries: int = 0,
        timeouts: int = 0,
        audio: Mapping[str, float] | None = None,
    ) -> None:
        """Append one usage record (a retried or re-scored unit adds more: all calls cost).
        ``calls`` are logical calls (a reply, a judge call, a decode); ``requests`` the HTTP
        requests they sent, ``retries`` and ``timeouts`` among them."""
        self._record_usage_values(
            unit,
            usage_values(
                provider,
                calls,
                prompt_tokens,
                completion_tokens,
                cost_usd,
                parse_failures,
                requests=requests,
                retries=retries,
                timeouts=timeouts,
                audio=audio,
            ),
        )

    @abstractmethod
    def _record_usage_values(self, unit: UnitLike, values: UsageValues) -> None:
        """Keep one usage record, as ``usage_values`` makes it."""

    @abstractmethod
    def record_model_usage(
        self, unit: UnitLike, component: str, models: Mapping[ModelKey, ModelUsage]
    ) -> None:
        """One ``model_usage`` row per (kind, provider, model) of ``component``."""

    @abstractmethod
    def add_model_identity(self, kind: str, identity: JSONReadObject) -> None:
        """Record a model/provider identity under ``models.<kind>`` of run.yaml (once per
        distinct value)."""

    def record_component_usage(
        self, unit: UnitLike, provider: str, used: ComponentUsage, parse_failures: int = 0
    ) -> None:
        """``record_usage`` for what one component sent while the unit ran or was scored
        (a ``usage_ledger`` entry): its calls, tokens, cost, requests, retries and timeouts,
        the audio its models heard and spoke, and its breakdown by model."""
        self.record_usage(
            unit,
            provider,
            used.calls,
            used.prompt_tokens,
            used.completion_tokens,
            used.cost_usd,
            parse_failures,
            requests=used.requests,
            retries=used.retries,
            timeouts=used.timeouts,
            audio={
                "prompt_audio_tokens": used.prompt_audio_tokens,
                "completion_audio_tokens": used.completion_audio_tokens,
                "audio_in_s": used.audio_in_s,
                "audio_out_s": used.audio_out_s,
            },
        )
        self.record_model_usage(unit, provider, used.models)


class IndexRecorder(RunRecorder):
    """Records to the run's index (usage rows commit with the unit's next write) and
    run.yaml."""

    def __init__(self, index: RunIndex, writes: UnitWrites, run_yaml: RunFile) -> None:
        self.index = index
        self.writes = writes
        self.run_yaml = run_yaml

    def start(self, unit: UnitLike) -> None:
        """Mark a unit ``running`` and count the attempt (one statement in the common case);
        returns once that is committed (shared with other units' writes of the moment)."""
        self.start_later(unit).result()

    def start_later(self, unit: UnitLike) -> Future[None]:
        now = utcnow()
        params = {"b_run": self.index.run_id, "b_key": unit.key, "b_now": now}
        insert = inserting(self.index, unit, "running", {"started_at": now})
        return self.writes.submit_later(
            Rows(START_UNIT, self.index.run_id, unit.key, [params], if_absent=insert)
        )

    def _record_usage_values(self, unit: UnitLike, values: UsageValues) -> None:
        amounts = values.pop("audio")
        if not isinstance(amounts, dict):
            raise TypeError(f"usage values carry no audio amounts: {amounts!r}")
        row = {
            "run_id": self.index.run_id,
            "unit_key": unit.key,
            "system": unit.system,
            **values,
            **amounts,
            "recorded_at": utcnow(),
        }
        # committed with the unit's completion (or the next write before it)
        self.writes.defer(unit, Rows(INSERT_USAGE, self.index.run_id, unit.key, [row]))

    def record_model_usage(
        self, unit: UnitLike, component: str, models: Mapping[ModelKey, ModelUsage]
    ) -> None:
        if not models:
            return
        now = utcnow()
        rows = [
            {
                "run_id": self.index.run_id,
                "unit_key": unit.key,
                "system": unit.system,
                "component": component,
                "kind": kind,
                "provider": provider,
                "model": model,
                **{name: getattr(use, name) for name in MODEL_AMOUNTS},
                "recorded_at": now,
            }
            for (kind, provider, model), use in models.items()
        ]
        # committed with the unit's completion (or the next write before it)
        self.writes.defer(unit, Rows(INSERT_MODEL_USAGE, self.index.run_id, unit.key, rows))

    def add_model_identity(self, kind: str, identity: JSONReadObject) -> None:
        self.run_yaml.add_model_identity(kind, identity)
