"""The record of one tool call executed on a scenario database."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ToolCallRecord:
    """One tool call as executed on the scenario database."""

    name: str
    arguments: dict[str, Any]
    result: Any
    kind: str = ""  # auth | read | write | system
    valid: bool = True  # parameters validated against the tool's JSON schema
    error: str | None = None  # schema or precondition error returned to the agent
