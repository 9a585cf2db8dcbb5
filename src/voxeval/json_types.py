"""Types for JSON data as it is read from and written to disk or the wire.

``JSONValue`` is recursive, so a payload typed with it is checked all the way down: a reader
narrows (``isinstance``) or validates into a model before it relies on a field's type, instead
of trusting an ``Any``. Structured artifacts have their own models in ``voxeval.runformat``;
these types are for the open-ended parts (provider payloads, metadata, settings dumps)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

JSONScalar: TypeAlias = str | int | float | bool | None
JSONValue: TypeAlias = JSONScalar | list["JSONValue"] | dict[str, "JSONValue"]
JSONObject: TypeAlias = dict[str, JSONValue]
JSONArray: TypeAlias = list[JSONValue]

# Read-only views: covariant, so a ``dict[str, float]`` or ``list[str]`` is accepted where a
# function only reads JSON-shaped input.
JSONReadValue: TypeAlias = JSONScalar | Sequence["JSONReadValue"] | Mapping[str, "JSONReadValue"]
JSONReadObject: TypeAlias = Mapping[str, JSONReadValue]
