"""What a protocol does when a system under test fails to reply (shared by the protocols whose
systems answer turns): tell the system's fault from ours, store the fault, record what the
attempt cost, and raise what the runner acts on."""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

from voxeval.api.context import RunContext
from voxeval.api.system_usage import SystemMeter, record_system_usage
from voxeval.api.work_unit import WorkUnit
from voxeval.audio import Audio
from voxeval.errors import (
    ConfigError,
    HarnessFault,
    ProviderUnavailable,
    SystemFault,
    classify_system_fault,
)
from voxeval.systems.base import Reply
from voxeval.systems.replay import MissingReply

# Raised while the system answers, yet not its fault: our side (retried by the runner), or a
# setup problem that no reply could fix (a missing key or model, a replay source without
# this item's reply).
NOT_SYSTEM_FAULTS = (HarnessFault, ConfigError, ProviderUnavailable, MissingReply)


def reply_failed(
    ctx: RunContext,
    unit: WorkUnit,
    error: Exception,
    *,
    who: str,
    meter: SystemMeter,
    heard: Audio | None,
    reply: Reply | None,
    store_fault: Callable[[SystemFault], None],
    input_fault: Callable[[Exception], Exception] | None = None,
) -> NoReturn:
    """Conclude a reply that raised ``error`` (``who``: the system, as the fault names it).

    An error on our side or a setup problem (``NOT_SYSTEM_FAULTS``) is raised again for the
    runner to retry or fail the unit; so is ``input_fault(error)`` when given (the input was
    at fault, not the system). Anything else is the system's fault: classified,
    stored by ``store_fault`` (so scoring scores the failure) and raised as ``SystemFault``.
    The system's usage (``meter``; it heard ``heard``) is recorded either way."""
    if isinstance(error, NOT_SYSTEM_FAULTS):
        record_system_usage(ctx, unit, None, meter, heard=heard)
        raise error  # our side, or a setup problem: the runner retries or fails the unit
    if input_fault is not None:
        record_system_usage(ctx, unit, None, meter, heard=heard)
        raise input_fault(error) from error
    fault = classify_system_fault(error, who)
    store_fault(fault)
    record_system_usage(ctx, unit, None if reply is None else reply.details, meter, heard=heard)
    raise fault from error
