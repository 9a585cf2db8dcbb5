"""What every run artifact model shares: the format version, lenient reading of fields a
later version may add, and errors that name the file and the field."""

from __future__ import annotations

import json
import numbers
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, PlainValidator, ValidationError

from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject, JSONReadValue

# The version of the run folder's layout and files. A folder whose run.yaml has no
# ``format_version`` was written before the field existed and reads as version 1, which is
# the format voxeval writes today (docs/runs.md#the-run-format).
FORMAT_VERSION = 1
LEGACY_FORMAT_VERSION = 1

# The open-ended parts of an artifact (a system's ``details``, a metric's ``details``, a
# protocol's own summary sections) as model fields: kept as they were written, without
# validating every nested value (summaries and databases are large, and a numpy scalar a
# protocol stored must be written back as it was). Signatures use ``voxeval.json_types``.
StoredJson = dict[str, Any]


def _number(value: object) -> int | float:
    """A JSON number, kept as it is: an int stays an int, so a rewritten file keeps the
    bytes it had (pydantic's ``int | float`` would also name both union members in errors)."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return value  # type: ignore[return-value]  # a numpy scalar is written as before
    raise ValueError("Input should be a number")


Number = Annotated[int | float, PlainValidator(_number)]

M = TypeVar("M", bound=BaseModel)


class ArtifactFormatError(ConfigError):
    """A run artifact that does not have the shape of its format version."""


class ArtifactModel(BaseModel):
    """Base of the artifact models: fields we do not know (a protocol's additions, a later
    minor addition) are kept as they are and written back unchanged."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    def to_data(self) -> JSONObject:
        """The fields as written to the file: only those that were given (an absent field
        stays absent), ints kept ints, unknown fields as they were."""
        return self.stored_data()

    def stored_data(self) -> StoredJson:
        """``to_data`` for readers of the open-ended sections (a protocol's own summary
        parts), which reach into them as written rather than narrowing each level."""
        return self.model_dump(mode="python", exclude_unset=True, by_alias=True)


def describe_error(where: str | Path, error: ValidationError) -> str:
    """``FILE: field.path: message`` for each problem, one per line."""
    lines = []
    for problem in error.errors():
        field = ".".join(str(part) for part in problem["loc"]) or "(top level)"
        lines.append(f"{where}: {field}: {problem['msg']}")
    return "\n".join(lines)


def parse_artifact(model: type[M], data: object, where: str | Path) -> M:
    """``data`` as ``model``; an ``ArtifactFormatError`` names ``where`` and each field."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise ArtifactFormatError(describe_error(where, error)) from None


def _artifact_text(path: Path) -> str | None:
    """The text of the file at ``path``; None when it does not exist, an error naming the
    file when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise ArtifactFormatError(f"{path}: cannot be read: {error}") from None


def read_json_artifact(model: type[M], path: Path) -> M | None:
    """The JSON file at ``path`` as ``model``; None when the file does not exist. A file
    that is not JSON, or not of the model's shape, is an error naming the file (and field)."""
    text = _artifact_text(path)
    if text is None:
        return None
    try:
        data = json.loads(text)
    except ValueError as error:
        raise ArtifactFormatError(f"{path}: not valid JSON: {error}") from None
    return parse_artifact(model, data, path)


def read_yaml_artifact(model: type[M], path: Path) -> M | None:
    """The YAML file at ``path`` as ``model``; None when it does not exist."""
    text = _artifact_text(path)
    if text is None:
        return None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ArtifactFormatError(f"{path}: not valid YAML: {error}") from None
    return parse_artifact(model, data if data is not None else {}, path)


def ordered_like(value: JSONReadValue, template: JSONReadValue) -> JSONReadValue:
    """``value`` with the keys of every mapping in ``template``'s order (a model lists its
    declared fields first; a file written in the caller's order must keep that order)."""
    if isinstance(value, Mapping) and isinstance(template, Mapping):
        out = {k: ordered_like(value[k], template[k]) for k in template if k in value}
        out.update((k, v) for k, v in value.items() if k not in out)
        return out
    if isinstance(value, list) and isinstance(template, list) and len(value) == len(template):
        return [ordered_like(v, t) for v, t in zip(value, template, strict=True)]
    return value
