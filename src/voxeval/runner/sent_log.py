"""The requests a unit's attempt sends, appended to ``sent_requests.log`` in its folder as
each one leaves, so that an attempt killed with its process (``kill -9`` of a local run, a
Ray worker that died) still counts them: the next attempt, or resume, records them as usage
rows of 0 calls (the calls never finished: their tokens and cost are unknown). One
``O_APPEND`` write per request, no index write and no fsync: a killed process's writes are
in the page cache; only an OS crash could lose them."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

from voxeval.providers.http.openai_http import RequestCounts
from voxeval.providers.usage.usage_ledger import current_component

SENT_LOG = "sent_requests.log"

# ``attributed`` components whose usage the protocols record under another name
_COMPONENT_NAMES = {"caller": "simulator"}


def usage_component(component: str, system: str) -> str:
    """The usage ``provider`` a protocol records an attributed component's requests under:
    the system under test's (``system``, a live call's ``agent``) is ``system:<name>``."""
    if component in ("system", "agent"):
        return f"system:{system}"
    return _COMPONENT_NAMES.get(component, component)


class LoggedRequests(RequestCounts):
    """A unit's request tally that also appends each request, as it is sent, to the unit's
    ``SENT_LOG``: one line ``<usage component>\t<requests>``."""

    def __init__(self, unit_dir: Path, system: str) -> None:
        super().__init__()
        self._path = unit_dir / SENT_LOG
        self._system = system

    def add(self, **amounts: float) -> None:
        super().add(**amounts)
        sent = int(amounts.get("requests", 0))
        if not sent:
            return
        line = f"{usage_component(current_component(), self._system)}\t{sent}\n"
        fd = os.open(self._path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode("utf-8"))  # one write: lines of threads never interleave
        finally:
            os.close(fd)


def logged_requests(unit_dir: Path) -> dict[str, int]:
    """The requests per usage component in a unit's ``SENT_LOG`` ({} without one; a line
    cut short by the kill is skipped: its request had not been counted yet)."""
    try:
        text = (unit_dir / SENT_LOG).read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError, UnicodeDecodeError):
        return {}
    counts: Counter[str] = Counter()
    for line in text.split("\n"):
        component, _, amount = line.partition("\t")
        if component and amount.isdigit():
            counts[component] += int(amount)
    return dict(counts)
