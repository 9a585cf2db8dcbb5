"""The unit of work of a run: one (item, system, trial, condition) cell of the plan."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class WorkUnit:
    """One (item, system, trial, condition) cell of the plan.

    ``category`` is the item's reporting group (e.g. WildSpeech task type or scenario kind).
    """

    item_id: str
    system: str
    trial: int = 0
    condition: str = "clean"
    category: str = ""

    @property
    def key(self) -> str:
        return f"{self.item_id}|{self.condition}|{self.system}|{self.trial}"
