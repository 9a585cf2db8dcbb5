"""An EVA-Bench record's expected conversation (``ground_truth.expected_trace.trace``) as the
scripted agent's path (``Scenario.agent_script``).

The trace is a list of events: ``user_utterance``, ``agent_utterance`` (``utterance``),
``tool_call`` (``tool_name``, ``params``) and ``tool_response``. The scripted agent plays one
step per caller turn (its tool calls first, then what it says), so every agent utterance closes
a step holding the tool calls made since the previous one; calls after the last utterance
form a final silent step. Tool responses are not replayed: the tools compute them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject, JSONValue

TRACE_FIELD = "ground_truth.expected_trace.trace"


class ScriptedCall(TypedDict):
    name: str
    arguments: JSONObject


class ScriptedStep(TypedDict):
    """One ``agent_script`` step as a mapping (the scenario model validates it)."""

    say: str
    tool_calls: list[ScriptedCall]


def trace_events(record: JSONObject, where: str) -> list[JSONValue]:
    truth = record.get("ground_truth")
    trace = truth.get("expected_trace") if isinstance(truth, dict) else None
    events = trace.get("trace") if isinstance(trace, dict) else trace
    if not isinstance(events, list):
        raise ConfigError(f"{where}: field '{TRACE_FIELD}' is missing or not a list")
    return events


def trace_to_script(events: Sequence[JSONValue], where: str) -> list[ScriptedStep]:
    """``agent_script`` steps (``say``, ``tool_calls``) from the trace events."""
    steps: list[ScriptedStep] = []
    pending: list[ScriptedCall] = []
    for n, event in enumerate(events):
        label = f"{where}: {TRACE_FIELD}.{n}"
        if not isinstance(event, dict):
            raise ConfigError(f"{label}: expected an event mapping")
        kind = event.get("event_type")
        if kind == "tool_call":
            name = event.get("tool_name")
            params = event.get("params", {})
            if not isinstance(name, str) or not name:
                raise ConfigError(f"{label}.tool_name: missing")
            if not isinstance(params, dict):
                raise ConfigError(f"{label}.params: expected a mapping of arguments")
            pending.append({"name": name, "arguments": params})
        elif kind == "agent_utterance":
            steps.append({"say": str(event.get("utterance", "")), "tool_calls": pending})
            pending = []
    if pending:
        steps.append({"say": "", "tool_calls": pending})
    if not any(step["tool_calls"] or step["say"] for step in steps):
        raise ConfigError(f"{where}: field '{TRACE_FIELD}' has no agent turns")
    return steps


def trace_tool_names(script: Sequence[ScriptedStep]) -> list[tuple[str, str]]:
    """(field path in the script, tool name) of every scripted call."""
    return [
        (f"agent_script.{s}.tool_calls.{c}.name", call["name"])
        for s, step in enumerate(script)
        for c, call in enumerate(step["tool_calls"])
    ]
