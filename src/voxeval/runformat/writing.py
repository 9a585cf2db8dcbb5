"""Writers go through the models: what is written has been validated as its artifact, and
has the bytes it had before the models existed (same keys, same order, ints kept ints)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from voxeval.json_types import JSONObject, JSONReadValue
from voxeval.runformat.base import (
    ArtifactModel,
    ordered_like,
    parse_artifact,
)
from voxeval.runformat.scores import UnitScores
from voxeval.runformat.summary import RunSummary


def record_data(
    model: type[ArtifactModel] | type[UnitScores],
    data: Mapping[str, JSONReadValue],
    where: str | Path,
) -> JSONObject:
    """``data`` validated as ``model`` (an ``ArtifactFormatError`` names ``where`` and the
    field) and dumped back from the model. Unit files are written with sorted keys, so the
    model's field order does not reach the file (``summary_text`` keeps ``data``'s order)."""
    parsed: ArtifactModel | UnitScores = parse_artifact(model, dict(data), where)
    return parsed.to_data()


def summary_text(data: Mapping[str, JSONReadValue], where: str | Path) -> str:
    """``report/summary.json``'s text, written through ``RunSummary``."""
    dumped = ordered_like(record_data(RunSummary, data, where), data)
    return json.dumps(dumped, indent=2, default=str, allow_nan=False) + "\n"
