"""The record of one tool call executed on a scenario database."""

from __future__ import annotations

from dataclasses import dataclass

from voxeval.json_types import JSONObject, JSONValue


@dataclass(frozen=True)
class ToolCallRecord:
    """One tool call as executed on the scenario database."""

    name: str
    arguments: JSONObject
    result: JSONValue
    kind: str = ""  # auth | read | write | system
    valid: bool = True  # parameters validated against the tool's JSON schema
    error: str | None = None  # schema or precondition error returned to the agent
    # arguments whose type differed from the schema and were converted (``tool_arguments:
    # coerce``), one readable line each: a diagnostic, not a refusal
    argument_mismatches: tuple[str, ...] = ()
