"""``voxeval analyze timing RUN``: the caller timing figures (``analysis.caller_timing``) of
every recorded call of a live-call run, pooled per caller persona."""

from __future__ import annotations

from typing import Any

from voxeval.analysis.calls.caller_timing import CallerTiming, caller_timing, timing_summary
from voxeval.errors import ConfigError
from voxeval.simulation.recorder import load_call
from voxeval.store import RunStore


def run_caller_timing(store: RunStore) -> dict[str, Any]:
    """Per persona (``call.json``'s ``persona``; ``unknown`` for calls recorded without it)
    the pooled timing summary; ``unreadable`` lists the units whose recording could not be
    read (named, never silently left out)."""
    by_persona: dict[str, CallerTiming] = {}
    unreadable: list[str] = []
    calls = 0
    for unit in store.units.records(status="done"):
        folder = store.folder.unit_dir(unit)
        try:
            call, timeline, _ = load_call(folder)
        except (FileNotFoundError, ValueError, TypeError, KeyError) as exc:
            unreadable.append(f"{folder}: {exc}")
            continue
        calls += 1
        persona = str(call.get("persona") or "unknown")
        by_persona.setdefault(persona, CallerTiming()).add(caller_timing(timeline))
    if not calls and not unreadable:
        raise ConfigError(f"{store.run_dir}: no recorded live call (is it a live-call run?)")
    return {
        "calls": calls,
        "personas": {p: timing_summary(t) for p, t in sorted(by_persona.items())},
        "unreadable": unreadable,
    }
