"""``executor: ray``: a run's units on a Ray cluster.

A pool of worker actors each builds the run's context once (models load once per worker and
stay loaded) and runs units sent to it: artifacts go straight to the shared run folder, the
scores and the journal of index writes come back to the driver, which commits them as they
arrive (``unit_work``). Ray restarts a worker that dies and runs its unit again (up to
``ray.max_retries`` times); the unit's folder is emptied before every attempt, and units the
driver already committed are never sent again, on this run or on a resume.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import os
import queue
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

from rich.console import Console

from voxeval.api.context import RunContext
from voxeval.config import RunConfig, parse_run_config
from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject, JSONReadObject, JSONReadValue
from voxeval.protocols.contract import WorkUnit
from voxeval.redaction import register_config_secrets
from voxeval.runner.faults import RetryPolicy
from voxeval.runner.ray_limits import NAMESPACE, install_ray_limiters, kill_run_limiters
from voxeval.runner.unit_executor import ExecuteUnits, OutcomeT
from voxeval.runner.unit_work import (
    UnitResult,
    commit_result,
    record_remote_failure,
    run_unit,
    with_concurrency,
    worker_context,
)
from voxeval.store import INDEX_URL_ENV

SCALE_EXTRA_HINT = "pip install 'voxeval[scale]'"
# CPUs a worker reserves per unit kind (the protocol): simulated calls and embedded scoring
# models keep a core busy; multi-turn units mostly wait on judges and systems.
DEFAULT_NUM_CPUS = {"single_turn": 1.0, "live_call": 1.0, "multi_turn": 0.5}
# Environment a worker needs from the driver: voxeval's own settings, model hub switches and
# the variables the config names (keys: api_key_env, headers_env).
_SHIPPED_ENV = re.compile(r"^(VOXEVAL_|HF_|TRANSFORMERS_)")


def import_ray() -> ModuleType:
    """The ``ray`` module, or a ConfigError naming the extra that installs it."""
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(
            f"executor: ray needs Ray, which is not installed ({exc}); install the scale "
            f"extra: {SCALE_EXTRA_HINT}"
        ) from None
    return ray


def executor_problems(config: RunConfig) -> list[tuple[str, str]]:
    """``(field, message)`` for an ``executor: ray`` config that cannot run here (the plan
    check lists them with the config's other mistakes)."""
    problems = []
    if importlib.util.find_spec("ray") is None:
        problems.append(
            ("executor", f"ray is not installed; install the scale extra: {SCALE_EXTRA_HINT}")
        )
    for kind, value in config.ray.num_cpus.items():
        if value <= 0:
            problems.append((f"ray.num_cpus.{kind}", f"must be > 0, got {value:g}"))
    return problems


def num_cpus_for(config: RunConfig, kind: str) -> float:
    """The CPUs one worker reserves for units of ``kind``: ``ray.num_cpus[kind]``, else
    ``ray.num_cpus['default']``, else ``DEFAULT_NUM_CPUS``."""
    hints = config.ray.num_cpus
    value = hints.get(kind, hints.get("default", DEFAULT_NUM_CPUS.get(kind, 1.0)))
    if value <= 0:
        raise ConfigError(f"ray.num_cpus.{kind}: must be > 0, got {value}")
    return float(value)


def env_names_in(data: JSONReadValue) -> set[str]:
    """Environment variable names the config refers to (``*_env`` fields, ``headers_env``)."""
    found: set[str] = set()
    if isinstance(data, dict):
        for key, value in data.items():
            if str(key).endswith("_env"):
                if isinstance(value, str):
                    found.add(value)
                elif isinstance(value, dict):
                    found.update(str(v) for v in value.values())
            found |= env_names_in(value)
    elif isinstance(data, list):
        for value in data:
            found |= env_names_in(value)
    return found


def shipped_env(config_data: JSONReadObject) -> dict[str, str]:
    """What workers get of the driver's environment (never the index URL: they do not open
    the index, and it may hold the database password)."""
    names = env_names_in(config_data)
    return {
        k: v
        for k, v in os.environ.items()
        if (k in names or _SHIPPED_ENV.match(k)) and k != INDEX_URL_ENV
    }


class UnitWorker:
    """A Ray actor running units of one run (its methods run on the actor's threads)."""

    def __init__(
        self,
        config_data: JSONObject,
        source: str | None,
        run_dir: str,
        env: dict[str, str],
        retry: RetryPolicy,
        lease_batch: int,
    ) -> None:
        os.environ.update(env)
        config = parse_run_config(config_data, source or "<run config>")
        config._source = source
        register_config_secrets(config)
        self.ctx = worker_context(config, run_dir, Console(stderr=True))
        self.retry = retry
        install_ray_limiters(self.ctx.store.run_id, lease_batch)

    def run(self, unit: WorkUnit, dispatch: str = "") -> UnitResult:
        worker = f"pid {os.getpid()}"
        return run_unit(self.ctx, unit, self.retry, worker=worker, dispatch=dispatch)

    def pid(self) -> int:
        return os.getpid()


def worker_name(run_id: str, suffix: str) -> str:
    return f"{run_id}/worker/{suffix}"


@dataclasses.dataclass(frozen=True)
class PoolShape:
    workers: int
    slots: int  # units one worker runs at once
    num_cpus: float

    @property
    def in_flight(self) -> int:
        return self.workers * self.slots


def pool_shape(config: RunConfig, kind: str, cluster_cpus: float, n_units: int) -> PoolShape:
    """Workers = ``ray.workers`` or the cluster's CPUs / the CPUs of one; at most one per
    unit. ``concurrency`` units are in flight across the cluster (at least one per worker)."""
    cpus = num_cpus_for(config, kind)
    workers = config.ray.workers or max(1, math.floor(cluster_cpus / cpus))
    workers = max(1, min(workers, n_units))
    slots = max(1, math.ceil(config.concurrency / workers))
    return PoolShape(workers=workers, slots=slots, num_cpus=cpus)


class WorkerPool:
    """Named worker actors and a queue of their free slots."""

    def __init__(
        self,
        ray: ModuleType,
        ctx: RunContext,
        shape: PoolShape,
        retry: RetryPolicy,
        max_retries: int,
    ) -> None:
        self.ray = ray
        config = ctx.config
        config_data = config.model_dump(mode="json")
        remote = ray.remote(UnitWorker)
        options = {
            "num_cpus": shape.num_cpus,
            "max_concurrency": shape.slots,
            "max_restarts": -1,  # a dead worker comes back ...
            "max_task_retries": max_retries,  # ... and reruns its unit this many times at most
            "namespace": NAMESPACE,
        }
        env = shipped_env(config_data)
        session = uuid.uuid4().hex[:6]  # a resumed run's workers never collide with old ones
        self.actors = [
            remote.options(**options, name=worker_name(ctx.store.run_id, f"{session}-{i}")).remote(
                config_data, config.source, str(ctx.store.run_dir), env, retry,
                config.ray.lease_batch,
            )
            for i in range(shape.workers)
        ]  # fmt: skip
        try:  # a worker that cannot build the run (e.g. the folder is not shared) says why
            ray.get([actor.pid.remote() for actor in self.actors])
        except ray.exceptions.RayError as exc:
            self.close()
            raise ConfigError(
                f"ray: the workers could not start ({exc}); is the run folder "
                f"{ctx.store.run_dir} reachable at that path on every node?"
            ) from None
        self._free: queue.Queue[int] = queue.Queue()
        for _ in range(shape.slots):
            for index in range(shape.workers):
                self._free.put(index)

    def run(self, unit: WorkUnit) -> UnitResult:
        index = self._free.get()
        try:
            # One id per unit sent: when Ray re-runs it on a restarted worker, the new attempt
            # finds the id the dead one left in the unit folder and counts that attempt.
            dispatch = uuid.uuid4().hex
            return self.ray.get(self.actors[index].run.remote(unit, dispatch))
        finally:
            self._free.put(index)

    def close(self) -> None:
        for actor in self.actors:
            self.ray.kill(actor, no_restart=True)


@contextmanager
def ray_session(config: RunConfig, console: Console) -> Iterator[ModuleType]:
    """Ray, connected: to ``ray.address`` when given, else a local cluster started here;
    an existing connection (e.g. a test's cluster) is used as is and left open."""
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    address = config.ray.address
    ray.init(
        address=address,
        include_dashboard=False if address is None else None,
        ignore_reinit_error=True,
        namespace=NAMESPACE,
    )
    where = address or "a local cluster"
    console.print(f"ray: connected to {where} ({ray.cluster_resources().get('CPU', 0):g} CPUs)")
    try:
        yield ray
    finally:
        ray.shutdown()


def run_units_on_ray(
    ctx: RunContext,
    units: list[WorkUnit],
    retry: RetryPolicy,
    execute_units: ExecuteUnits[OutcomeT],
) -> OutcomeT:
    """Run ``units`` on Ray workers; the driver writes every result to the index as it comes
    back. ``execute_units`` is the runner's (progress, Ctrl-C, error accounting): its threads
    only wait for workers. Returns its ``RunOutcome``."""
    store = ctx.store
    if not units:
        return execute_units(ctx, units, lambda u: None, lambda u, e: "", "evaluating")
    with ray_session(ctx.config, ctx.console) as ray:
        kind = ctx.require_protocol().name
        cpus = float(ray.cluster_resources().get("CPU", 1.0))
        shape = pool_shape(ctx.config, kind, cpus, len(units))
        ctx.console.print(
            f"ray: {shape.workers} workers, each {shape.num_cpus:g} CPU and up to "
            f"{shape.slots} units at once ({kind})"
        )
        pool = WorkerPool(ray, ctx, shape, retry, ctx.config.ray.max_retries)

        def work(unit: WorkUnit) -> None:
            store.recorder.start(unit)  # a driver killed now leaves it 'running': resume clears it
            commit_result(store, unit, pool.run(unit))

        def on_error(unit: WorkUnit, exc: Exception) -> str:
            return record_remote_failure(store, unit, exc, died=_is_worker_death(ray, exc))

        driver = with_concurrency(ctx, shape.in_flight)
        try:
            return execute_units(driver, units, work, on_error, "evaluating (ray)")
        finally:
            pool.close()
            kill_run_limiters(store.run_id)


def _is_worker_death(ray: ModuleType, exc: Exception) -> bool:
    exceptions = ray.exceptions
    return isinstance(exc, exceptions.RayActorError | exceptions.WorkerCrashedError)
