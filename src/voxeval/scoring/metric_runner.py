"""The one loop that runs metrics, for every protocol: a metric cannot lose the others'
results, and what a metric's failure becomes (not run, or pending) is decided in one place."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

import httpx

from voxeval.errors import EndpointError, HarnessFault, ProviderUnavailable
from voxeval.scoring.metric import METRICS, Metric
from voxeval.scoring.score import Score

RecordT = TypeVar("RecordT")
ResourcesT = TypeVar("ResourcesT")


def is_transient_fault(exc: BaseException) -> bool:
    """A fault on our side that another attempt may not hit: a ``HarnessFault``, or a remote
    provider (judge, scoring ASR) that kept failing after its own retries. A HarnessFault
    marked not retryable is not transient."""
    if isinstance(exc, HarnessFault):
        return exc.retryable
    return isinstance(exc, EndpointError | httpx.TransportError | TimeoutError)


def guarded_metric(name: str, run: Callable[[], Score]) -> Score:
    """Run one metric so that it cannot lose the others' results: a missing resource
    (``ProviderUnavailable``) or a broken metric is not-run with the reason; a transient
    fault on our side (judge or scoring ASR down after its retries) is *pending*, to be
    retried by the next ``run`` or ``score``."""
    try:
        return run()
    except ProviderUnavailable as exc:
        return Score.not_run(str(exc))
    except Exception as exc:
        if is_transient_fault(exc):
            return Score.pending_retry(f"{name}: {type(exc).__name__}: {exc}")
        return Score.not_run(f"{name} failed: {type(exc).__name__}: {exc}")


def run_metric(name: str, record: RecordT, resources: ResourcesT) -> Score:
    """Run the registered metric ``name`` on a protocol's record (a single-turn
    ``ReplyRecord``, a ``LiveCallRecord``) with its scoring resources; see ``guarded_metric``
    for what a failure becomes."""
    # the registry cannot know a metric's record type: the protocol asks only for metrics
    # that declared it (``MetricInfo.protocols``)
    metric: Metric[RecordT, ResourcesT] = METRICS.lookup(name)
    return guarded_metric(name, lambda: metric(record, resources))


def run_metrics(names: Iterable[str], record: RecordT, resources: ResourcesT) -> dict[str, Score]:
    """Every metric of ``names`` on one record, in order."""
    return {name: run_metric(name, record, resources) for name in names}
