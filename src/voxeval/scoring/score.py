"""The result of one metric on one record."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from voxeval.json_types import JSONObject, JSONReadObject, JSONReadValue
from voxeval.runformat.scores import MetricScore


@dataclass(frozen=True)
class Score:
    """``value`` is the metric's number; ``passed`` its threshold verdict where one exists.

    A metric that could not run returns ``Score.not_run(reason)``: value None and the reason
    in ``error``. It never returns a default number. ``Score.pending(reason)`` is a not-run
    caused by a transient fault on voxeval's side (a judge endpoint down after its retries):
    the next ``run`` or ``score`` tries it again, and it never replaces a value already stored.
    """

    value: float | None
    passed: bool | None = None
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    pending: bool = False

    @classmethod
    def not_run(cls, reason: str, **details: JSONReadValue) -> Score:
        return cls(value=None, passed=None, details=details, error=reason)

    @classmethod
    def pending_retry(cls, reason: str, **details: JSONReadValue) -> Score:
        """Not scored yet because of a transient fault on voxeval's side; retried later."""
        return cls(value=None, passed=None, details=details, error=reason, pending=True)

    @property
    def ran(self) -> bool:
        return self.error is None and self.value is not None

    def to_dict(self) -> JSONObject:
        return {
            "value": self.value,
            "passed": self.passed,
            "details": self.details,
            "error": self.error,
            "pending": self.pending,
        }

    @classmethod
    def from_dict(cls, data: JSONReadObject) -> Score:
        """From a stored score (``scores.json``'s ``MetricScore``, validated: a field of the
        wrong type is an error naming it)."""
        stored = MetricScore.model_validate(data)
        return cls(
            value=stored.value,
            passed=stored.passed,
            details=dict(stored.details or {}),
            error=stored.error,
            pending=stored.pending,
        )
