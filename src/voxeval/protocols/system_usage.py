"""The usage of a system under test while it answered one unit, recorded for the unit's
usage table (shared by the protocols whose systems answer turns)."""

from __future__ import annotations

from typing import Any

from voxeval.protocols.context import RunContext
from voxeval.protocols.contract import WorkUnit
from voxeval.providers.openai_http import RequestCounts


def record_system_usage(
    ctx: RunContext, unit: WorkUnit, details: dict[str, Any] | None, http: RequestCounts
) -> None:
    """One logical call of the system: the tokens it reported and the HTTP requests, retries
    and timeouts counted while it answered (also when it failed: those requests were sent)."""
    usage = (details or {}).get("usage")
    if not isinstance(usage, dict) and not http.requests:
        return  # a local system that reports nothing (e.g. replay)
    usage = usage if isinstance(usage, dict) else {}
    ctx.store.record_usage(
        unit,
        f"system:{unit.system}",
        1,
        int(usage.get("prompt_tokens") or 0),
        int(usage.get("completion_tokens") or 0),
        usage.get("cost_usd"),
        requests=int(http.requests),
        retries=int(http.retries),
        timeouts=int(http.timeouts),
    )
