"""Whether a system's latencies were measured or modelled, from its recorded calls.

Each ``call.json`` (``voxeval.simulation.recorder``) says how the agent's reply latencies were
obtained and how much of each came from the declared speech model voxeval charged for
rendering a text-only agent's text. The summary states it per system, so a reader never
takes a modelled figure for a measured one."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from voxeval.atomic_files import read_json
from voxeval.errors import ConfigError
from voxeval.json_types import JSONArray, JSONObject, JSONValue
from voxeval.simulation.recorder import CALL_FILE


def _one_or_mixed(values: set[str]) -> str | None:
    if not values:
        return None
    return next(iter(values)) if len(values) == 1 else "mixed"


def _seconds(value: JSONValue) -> float:
    if not isinstance(value, int | float | str):  # as float() read them before
        raise ConfigError(f"call latency: expected seconds, got {value!r}")
    return float(value)


def recorded_calls(unit_dirs: Iterable[Path]) -> Iterator[JSONObject]:
    """The ``call.json`` of each unit folder that holds one (a unit that never reached its
    call has none)."""
    for folder in unit_dirs:
        call = read_json(folder / CALL_FILE)
        if isinstance(call, dict):
            yield call


def latency_basis(unit_dirs: Iterable[Path]) -> JSONObject | None:
    """The basis of the latencies of the calls in ``unit_dirs`` (None: no recorded call)."""
    calls = unknown = 0
    agent: set[str] = set()
    measured_by: set[str] = set()
    lanes: set[bool] = set()
    clocks: set[str] = set()
    compute_left_out = 0
    models: JSONArray = []
    agent_s = rendering_s = 0.0
    turns = rendered_turns = 0
    for call in recorded_calls(unit_dirs):
        calls += 1
        latency = call.get("latency")
        if not isinstance(latency, dict):
            unknown += 1  # recorded before calls said how their latency was obtained
            continue
        agent.add(str(latency.get("agent")))
        measured_by.add(str(latency.get("measured_by")))
        lanes.add(bool(latency.get("compute_lane")))
        compute_left_out += latency.get("agent_compute_in_latency") is False
        if latency.get("clock"):  # recorded since calls say which clock they ran on
            clocks.add(str(latency["clock"]))
        rendering = latency.get("rendering_by_voxeval")
        if isinstance(rendering, dict) and rendering.get("model") not in models:
            models.append(rendering["model"])
        listed = latency.get("turns")
        for turn in listed if isinstance(listed, list) else []:
            if not isinstance(turn, dict):  # calls write an object per turn
                raise ConfigError(f"call latency: a turn must be an object, got {turn!r}")
            turns += 1
            agent_s += _seconds(turn.get("agent_s", 0.0))
            rendering_s += _seconds(turn.get("rendering_s", 0.0))
            rendered_turns += bool(turn.get("rendered_by_voxeval"))
    if calls == 0:
        return None
    total = agent_s + rendering_s
    return {
        "agent": _one_or_mixed(agent) or "unknown",
        "measured_by": _one_or_mixed(measured_by),
        "compute_lane": None if not lanes else all(lanes),
        "calls": calls,
        # wall: the calls ran in real time (external real-time agents); their timings are
        # what happened, machine load included
        "clock": _one_or_mixed(clocks),
        "calls_without_record": unknown,
        # calls whose agent ran on virtual time with its compute left out of its latencies
        "calls_without_agent_compute": compute_left_out,
        "replies": turns,
        "rendering_by_voxeval": (
            None
            if not models
            else {
                "models": models,
                "replies": rendered_turns,
                "seconds": round(rendering_s, 4),
                # the declared rendering time as a share of all reply latency
                "share": round(rendering_s / total, 4) if total > 0 else None,
            }
        ),
    }
