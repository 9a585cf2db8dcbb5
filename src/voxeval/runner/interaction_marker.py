"""A unit's finished interaction, marked in its folder so that a run killed while the unit
was being scored does not call its system again on resume.

A local run talks to ``concurrency`` systems while the units answered just before are scored
(``execute_units``' finish stage). Without a mark, a ``kill -9`` then lost every unit not yet
committed, and the resumed run asked their systems again: at concurrency 2, up to five paid
calls per kill. With it, only the units that were talking to their system run again (at most
``concurrency``); the others are scored from the reply they had already stored. The mark is
written after the protocol has stored everything of the interaction, atomically, and names
the system's fault when there was one (a fault is a scored result)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from voxeval.atomic_files import read_json, write_json_atomic
from voxeval.errors import SystemFault

INTERACTED_FILE = "interacted.json"


def mark_interacted(unit_dir: Path, fault: SystemFault | None) -> None:
    """Record that the unit's interaction finished (with ``fault``, or cleanly)."""
    record: dict[str, Any] = {"system_fault": None}
    if fault is not None:
        record["system_fault"] = {"cause": fault.cause, "message": str(fault)}
    write_json_atomic(unit_dir / INTERACTED_FILE, record)


def finished_interaction(unit_dir: Path) -> tuple[bool, SystemFault | None]:
    """(True, the system's fault or None) when the unit's interaction finished in an earlier
    process; (False, None) when it must run (again)."""
    try:
        record = read_json(unit_dir / INTERACTED_FILE)
        if not isinstance(record, dict) or "system_fault" not in record:
            return False, None
        fault = record["system_fault"]
        if isinstance(fault, dict):
            message, cause = str(fault.get("message") or ""), str(fault.get("cause"))
            return True, SystemFault(message, cause=cause)
    except (OSError, ValueError):  # unreadable: run the unit again, as without a mark
        return False, None
    return True, None
