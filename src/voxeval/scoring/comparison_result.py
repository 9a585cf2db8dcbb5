"""The result of one comparison step across systems (e.g. a pairwise verdict)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

ComparisonStatus = Literal["done", "pending", "failed", "not_run"]
COMPARISON_STATUSES: tuple[ComparisonStatus, ...] = ("done", "pending", "failed", "not_run")


@dataclass(frozen=True)
class ComparisonResult:
    """``status``: ``done`` (``result`` holds the verdict), ``pending`` (a transient fault on
    our side or a pending input score: retried by the next ``run``/``score``), ``failed``
    (compared, but could not give a result: ``error`` and ``cause`` say why) or ``not_run``
    (an input unit failed on our side or is unfinished: ``cause`` names it).

    A pending result may carry the partial verdict it could give in ``result``."""

    status: ComparisonStatus
    result: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    cause: str | None = None

    def __post_init__(self) -> None:
        if self.status not in COMPARISON_STATUSES:
            raise ValueError(f"comparison status must be one of {COMPARISON_STATUSES}")
        if self.status != "done" and not self.error:
            raise ValueError(f"a {self.status} comparison needs the reason in error")

    @classmethod
    def done(cls, result: dict[str, Any]) -> ComparisonResult:
        return cls("done", dict(result))

    @classmethod
    def pending_retry(cls, reason: str, result: dict[str, Any] | None = None) -> ComparisonResult:
        return cls("pending", dict(result or {}), error=reason)

    @classmethod
    def failed(cls, reason: str, cause: str) -> ComparisonResult:
        return cls("failed", {}, error=reason, cause=cause)

    @classmethod
    def not_run(cls, reason: str, cause: str) -> ComparisonResult:
        return cls("not_run", {}, error=reason, cause=cause)

    @property
    def is_done(self) -> bool:
        return self.status == "done"
