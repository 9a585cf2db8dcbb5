"""Totals of provider usage (calls, HTTP requests, retries, timeouts, tokens, cost, parse
failures) from the usage table."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

UsageRow = tuple[str, str, int, int, int, float | None, int, int | None, int | None, int | None]
"""(system, provider, calls, prompt_tokens, completion_tokens, cost_usd, parse_failures,
requests, retries, timeouts); the last three are None in rows written before they were
counted."""

# Summed as they are; a missing count (an older index) adds nothing.
_COUNTS = ("calls", "prompt_tokens", "completion_tokens", "parse_failures")
_HTTP_COUNTS = ("requests", "retries", "timeouts")


def empty_usage() -> dict[str, Any]:
    return {
        "calls": 0,
        "requests": 0,
        "retries": 0,
        "timeouts": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "cost_usd": None,
        "calls_without_cost": 0,
        "parse_failures": 0,
    }


def summarize_usage(rows: Iterable[UsageRow]) -> dict[str, Any]:
    """``{"total", "by_provider", "by_system"}``. ``calls`` are logical calls, ``requests``
    the HTTP requests they sent (retries included, cache hits none); ``cost_usd`` sums known
    costs (None when no record had one); records without a price are counted in
    ``calls_without_cost``."""
    total = empty_usage()
    by_provider: dict[str, dict[str, Any]] = {}
    by_system: dict[str, dict[str, Any]] = {}
    for row in rows:
        system, provider, calls, prompt, completion, cost, failures, *http = row
        amounts = dict(zip(_COUNTS, (calls, prompt, completion, failures), strict=True))
        amounts.update(zip(_HTTP_COUNTS, (int(n or 0) for n in http), strict=True))
        for bucket in (
            total,
            by_provider.setdefault(provider, empty_usage()),
            by_system.setdefault(system, empty_usage()),
        ):
            for name, amount in amounts.items():
                bucket[name] += amount
            if cost is None:
                bucket["calls_without_cost"] += calls
            else:
                bucket["cost_usd"] = (bucket["cost_usd"] or 0.0) + float(cost)
    for bucket in (total, *by_provider.values(), *by_system.values()):
        calls = bucket["calls"]
        bucket["parse_failure_rate"] = bucket["parse_failures"] / calls if calls else None
    return {"total": total, "by_provider": by_provider, "by_system": by_system}
