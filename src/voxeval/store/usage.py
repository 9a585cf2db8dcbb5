"""Totals of provider usage (calls, HTTP requests, retries, timeouts, tokens, audio tokens,
seconds of audio in and out, cost, parse failures) from the usage table, and of the
per-model breakdown in the model_usage table."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any, TypeAlias

UsageRow = tuple[Any, ...]
"""(system, provider, calls, prompt_tokens, completion_tokens, cost_usd, parse_failures,
requests, retries, timeouts[, prompt_audio_tokens, completion_audio_tokens, audio_in_s,
audio_out_s]); the HTTP counts are None in rows written before they were counted, the audio
amounts None (or absent) in rows written before audio was accounted."""

# The amounts of a model_usage row (and of ``ModelUsage``), in column order.
MODEL_AMOUNTS: tuple[str, ...] = (
    "calls",
    "requests",
    "retries",
    "timeouts",
    "prompt_tokens",
    "completion_tokens",
    "prompt_audio_tokens",
    "completion_audio_tokens",
    "audio_in_s",
    "audio_out_s",
)
_AUDIO = ("prompt_audio_tokens", "completion_audio_tokens", "audio_in_s", "audio_out_s")

# One usage record's values (``usage_values``): the provider, counts, the cost and, under
# "audio", the audio amounts.
UsageValues: TypeAlias = dict[str, str | int | float | dict[str, float] | None]


def usage_values(
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
) -> UsageValues:
    """The arguments of ``RunRecorder.record_usage``, normalised (counts as ints, ``audio`` as a
    dict of the audio amounts): what a usage row holds, and what a Ray worker's journal
    carries to the driver."""
    return {
        "provider": provider,
        "calls": int(calls),
        "prompt_tokens": int(prompt_tokens),
        "completion_tokens": int(completion_tokens),
        "cost_usd": cost_usd,
        "parse_failures": int(parse_failures),
        "requests": int(requests),
        "retries": int(retries),
        "timeouts": int(timeouts),
        "audio": {name: (audio or {}).get(name, 0) for name in _AUDIO},
    }


# Summed as they are; a missing count (an older index) adds nothing.
_COUNTS = ("calls", "prompt_tokens", "completion_tokens", "parse_failures")
_HTTP_COUNTS = ("requests", "retries", "timeouts")
_SECONDS = ("audio_in_s", "audio_out_s")


def empty_usage() -> dict[str, Any]:
    return {
        "calls": 0,
        "requests": 0,
        "retries": 0,
        "timeouts": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "prompt_audio_tokens": 0,
        "completion_audio_tokens": 0,
        "audio_in_s": 0.0,
        "audio_out_s": 0.0,
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
    # Seconds and dollars are summed exactly (math.fsum) once all rows are in: rows arrive
    # in commit order, which differs with concurrency and executor, and a running float sum
    # would differ in its last digits with it.
    parts: defaultdict[tuple[int, str], list[float]] = defaultdict(list)
    for row in rows:
        system, provider, calls, prompt, completion, cost, failures, *rest = row
        http, audio = rest[:3], rest[3:]
        amounts = dict(zip(_COUNTS, (calls, prompt, completion, failures), strict=True))
        amounts.update(zip(_HTTP_COUNTS, (int(n or 0) for n in http), strict=True))
        amounts.update(zip(_AUDIO, (n or 0 for n in audio), strict=False))
        for bucket in (
            total,
            by_provider.setdefault(provider, empty_usage()),
            by_system.setdefault(system, empty_usage()),
        ):
            for name, amount in amounts.items():
                if name in _SECONDS:
                    parts[id(bucket), name].append(float(amount))
                else:
                    bucket[name] += amount
            if cost is None:
                bucket["calls_without_cost"] += calls
            else:
                parts[id(bucket), "cost_usd"].append(float(cost))
    for bucket in (total, *by_provider.values(), *by_system.values()):
        for name in _SECONDS:
            bucket[name] = math.fsum(parts.get((id(bucket), name), ()))
        costs = parts.get((id(bucket), "cost_usd"))
        bucket["cost_usd"] = None if costs is None else math.fsum(costs)
        calls = bucket["calls"]
        bucket["parse_failure_rate"] = bucket["parse_failures"] / calls if calls else None
    return {"total": total, "by_provider": by_provider, "by_system": by_system}


def model_label(kind: str, provider: str, model: str) -> str:
    """``kind:provider`` or ``kind:provider:model`` when the model is not the provider."""
    return f"{kind}:{provider}" if model == provider else f"{kind}:{provider}:{model}"


def summarize_model_usage(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Amounts summed per model (``model_label``) over model_usage rows, with the model's
    kind, provider, model and the components that called it."""
    models: dict[str, dict[str, Any]] = {}
    parts: defaultdict[tuple[str, str], list[float]] = defaultdict(list)
    for row in rows:
        label = model_label(row["kind"], row["provider"], row["model"])
        bucket = models.setdefault(
            label,
            {
                "kind": row["kind"],
                "provider": row["provider"],
                "model": row["model"],
                "components": [],
                **dict.fromkeys(MODEL_AMOUNTS, 0),
            },
        )
        for name in MODEL_AMOUNTS:
            if name in _SECONDS:
                parts[label, name].append(float(row[name] or 0))
            else:
                bucket[name] += row[name] or 0
        if row["component"] not in bucket["components"]:
            bucket["components"].append(row["component"])
    for label, bucket in models.items():
        for name in _SECONDS:
            if name in bucket:  # exactly, whatever the rows' order (see summarize_usage)
                bucket[name] = math.fsum(parts.get((label, name), ()))
        bucket["components"].sort()
    return models
