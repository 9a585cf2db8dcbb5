"""``comparisons/<step>/<key>.json``: one result of a comparison step across systems
(docs/runs.md#comparisons-across-systems)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from voxeval.runformat.base import ArtifactModel, StoredJson

COMPARISONS_DIR = "comparisons"
ComparisonStatus = Literal["done", "pending", "failed", "not_run"]


class ComparisonFile(ArtifactModel):
    """A stored comparison: its step, stable key, the unit keys it read, its status and the
    step's result (pairwise: per metric the two values, the better direction, the outcome)."""

    step: str
    key: str
    units: list[str] = Field(default_factory=list)
    status: ComparisonStatus
    result: StoredJson = Field(default_factory=dict)
    error: str | None = None
    cause: str | None = None
    compared_at: str | None = None
