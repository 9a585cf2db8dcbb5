"""The result of one metric on one record."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Score:
    """``value`` is the metric's number; ``passed`` its threshold verdict where one exists.

    A metric that could not run returns ``Score.not_run(reason)``: value None and the reason
    in ``error``. It never returns a default number.
    """

    value: float | None
    passed: bool | None = None
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None

    @classmethod
    def not_run(cls, reason: str, **details: Any) -> Score:
        return cls(value=None, passed=None, details=details, error=reason)

    @property
    def ran(self) -> bool:
        return self.error is None and self.value is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "passed": self.passed,
            "details": self.details,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Score:
        return cls(
            value=data.get("value"),
            passed=data.get("passed"),
            details=dict(data.get("details") or {}),
            error=data.get("error"),
        )
