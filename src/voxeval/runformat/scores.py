"""``items/<unit>/scores.json``: every metric of one unit, ``{metric: MetricScore}``."""

from __future__ import annotations

from pydantic import Field, RootModel

from voxeval.json_types import JSONObject
from voxeval.runformat.base import ArtifactModel, Number, StoredJson

SCORES_FILE = "scores.json"


class MetricScore(ArtifactModel):
    """One metric's result: ``value`` None when it did not run (the reason in ``error``);
    ``pending`` when a transient fault on voxeval's side left it to retry."""

    value: Number | None = None
    passed: bool | None = None
    details: StoredJson | None = Field(default_factory=dict)  # null in some older files
    error: str | None = None
    pending: bool = False


class UnitScores(RootModel[dict[str, MetricScore]]):
    """The whole file: metric name -> its result."""

    def to_data(self) -> JSONObject:
        return {name: score.to_data() for name, score in self.root.items()}

    def __getitem__(self, metric: str) -> MetricScore:
        return self.root[metric]

    def metrics(self) -> list[str]:
        return list(self.root)
