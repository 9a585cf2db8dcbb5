"""The usage of a system under test while it answered one unit, recorded for the unit's
usage tables (shared by the protocols whose systems answer turns)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from voxeval.api.context import RunContext
from voxeval.api.protocol import WorkUnit
from voxeval.audio import Audio
from voxeval.json_types import JSONReadObject
from voxeval.providers.http.openai_http import RequestCounts, count_requests
from voxeval.providers.usage.usage_ledger import attributed, usage_ledger
from voxeval.providers.usage.usage_meter import ModelKey, ModelUsage

SYSTEM_KIND = "system"  # model_usage kind of a system priced as a whole (no metered models)


@dataclass
class SystemMeter:
    """What one reply of a system cost: its HTTP requests and its metered model calls (a
    cascade's ASR, LLM and TTS), filled in when the ``metering_reply`` block ends."""

    http: RequestCounts = field(default_factory=RequestCounts)
    models: dict[ModelKey, ModelUsage] = field(default_factory=dict)


@contextmanager
def metering_reply() -> Iterator[SystemMeter]:
    """Meter the system's reply inside the block (also when it raises)."""
    meter = SystemMeter()
    with usage_ledger() as ledger:
        try:
            with attributed("system", calls=0), count_requests() as meter.http:
                yield meter
        finally:
            used = ledger.get("system")
            if used is not None:
                meter.models = used.models


def _count(usage: JSONReadObject, name: str) -> int:
    """A token count a system reported (0 when it did not)."""
    value = usage.get(name) or 0
    if not isinstance(value, int | float | str):
        raise TypeError(f"usage field {name!r} is not a number: {value!r}")
    return int(value)


def _cost(usage: JSONReadObject) -> float | None:
    """The cost a system reported for a reply, in US dollars (None: not reported)."""
    value = usage.get("cost_usd")
    if value is None:
        return None
    if not isinstance(value, int | float | str):
        raise TypeError(f"usage field 'cost_usd' is not a number: {value!r}")
    return float(value)


def _duration(audio: Audio | None) -> float:
    return 0.0 if audio is None else float(audio.duration)


def record_system_usage(
    ctx: RunContext,
    unit: WorkUnit,
    details: JSONReadObject | None,
    meter: SystemMeter,
    *,
    heard: Audio | None = None,
    spoke: Audio | None = None,
) -> None:
    """One logical call of the system: the tokens it reported and the HTTP requests, retries
    and timeouts counted while it answered (also when it failed: those requests were sent).
    Per model: the metered calls of its components; a system without metered components
    (an endpoint) is one ``system`` row with the audio it heard and spoke, priced whole."""
    usage = (details or {}).get("usage")
    http = meter.http
    if not isinstance(usage, dict) and not http.requests and not meter.models:
        return  # a local system that reports nothing (e.g. replay)
    usage = usage if isinstance(usage, dict) else {}
    models = dict(meter.models)
    if not models:
        spec = ctx.config.system(unit.system)
        model = spec.options().get("model")
        whole = ModelUsage(
            calls=1,
            requests=int(http.requests),
            retries=int(http.retries),
            timeouts=int(http.timeouts),
            prompt_tokens=_count(usage, "prompt_tokens"),
            completion_tokens=_count(usage, "completion_tokens"),
            prompt_audio_tokens=_count(usage, "prompt_audio_tokens"),
            completion_audio_tokens=_count(usage, "completion_audio_tokens"),
            audio_in_s=_duration(heard),
            audio_out_s=_duration(spoke),
        )
        models[(SYSTEM_KIND, spec.type, str(model) if model else spec.type)] = whole
    component = f"system:{unit.system}"
    ctx.store.recorder.record_usage(
        unit,
        component,
        1,
        _count(usage, "prompt_tokens"),
        _count(usage, "completion_tokens"),
        _cost(usage),
        requests=int(http.requests),
        retries=int(http.retries),
        timeouts=int(http.timeouts),
        audio={
            name: sum(getattr(use, name) for use in models.values())
            for name in (
                "prompt_audio_tokens",
                "completion_audio_tokens",
                "audio_in_s",
                "audio_out_s",
            )
        },
    )
    ctx.store.recorder.record_model_usage(unit, component, models)
