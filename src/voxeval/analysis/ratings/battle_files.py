"""Read a battles file (CSV or JSONL, one battle per row or line) for ``voxeval ratings``.

Fields:

- ``model_a``, ``model_b`` (required): the systems in positions A and B;
- ``winner`` (required): ``model_a`` / ``model_b`` / ``tie`` / ``tie (bothbad)`` (FastChat's
  values), ``a`` / ``b`` (any case), or one of the two system names;
- ``item`` or ``question_id`` (optional): the compared item, the unit the bootstrap resamples
  (battles about one item are resampled together); without it each battle is its own item;
- ``order`` or ``tstamp`` (optional, a number): the judging order that online Elo replays;
  without it the file's order;
- ``dimension`` (optional): battles of each dimension are rated separately;
- style features (optional): a pair of numeric columns ``<name>_a`` and ``<name>_b`` (e.g.
  ``length_a``, ``length_b``), or in JSONL the objects ``features_a`` / ``features_b``.

Other fields are ignored and listed (FastChat's battle records carry many). Errors name the
file, the line and the field.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from voxeval.analysis.ratings.arena_summary import arena_summary
from voxeval.analysis.ratings.battles import Battle, Winner
from voxeval.analysis.ratings.bradley_terry import DEFAULT_RATING_CONFIDENCE
from voxeval.analysis.ratings.elo_intervals import EloPoint
from voxeval.analysis.ratings.human_votes import read_records
from voxeval.analysis.ratings.rating_bootstrap import DEFAULT_RATING_RESAMPLES
from voxeval.errors import ConfigError
from voxeval.json_types import JSONReadObject, JSONReadValue

ITEM_FIELDS = ("item", "question_id")
ORDER_FIELDS = ("order", "tstamp")
KNOWN = {"model_a", "model_b", "winner", "dimension", "features_a", "features_b",
         *ITEM_FIELDS, *ORDER_FIELDS}  # fmt: skip
_WINNERS: dict[str, Winner] = {
    "model_a": "a", "model_b": "b", "a": "a", "b": "b", "tie": "tie", "tie (bothbad)": "tie",
}  # fmt: skip


@dataclass(frozen=True)
class BattleFile:
    battles: list[Battle]
    features: list[str]  # the style features named in the file
    ignored: list[str] = field(default_factory=list)  # fields read and not used


def _name(row: JSONReadObject, key: str, where: str) -> str:
    value = row.get(key)
    if value is None or isinstance(value, bool) or not str(value).strip():
        raise ConfigError(f"{where}: field {key!r} is missing or empty")
    return str(value).strip()


def _number(value: JSONReadValue, key: str, where: str) -> float:
    try:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise TypeError  # float() refuses it too
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: field {key!r} must be a number, not {value!r}") from None
    if not math.isfinite(number):
        raise ConfigError(f"{where}: field {key!r} must be finite, not {value!r}")
    return number


def _winner(row: JSONReadObject, a: str, b: str, where: str) -> Winner:
    raw = _name(row, "winner", where)
    if raw in (a, b) and raw.lower() not in _WINNERS:
        return "a" if raw == a else "b"
    found = _WINNERS.get(raw.lower())
    if found is None:
        raise ConfigError(
            f"{where}: field 'winner' is {raw!r}; expected model_a, model_b, tie, "
            f"'tie (bothbad)', a, b, {a!r} or {b!r}"
        )
    return found


def _features(row: JSONReadObject, where: str) -> tuple[dict[str, float], dict[str, float]]:
    side: dict[str, dict[str, float]] = {"a": {}, "b": {}}
    for suffix in ("a", "b"):
        nested = row.get(f"features_{suffix}")
        if nested not in (None, ""):
            if not isinstance(nested, Mapping):
                raise ConfigError(f"{where}: field 'features_{suffix}' must be an object")
            for name, value in nested.items():
                side[suffix][str(name)] = _number(value, f"features_{suffix}.{name}", where)
    for key, value in row.items():
        if key in KNOWN or not key.endswith(("_a", "_b")) or value in (None, ""):
            continue
        name, suffix = key[:-2], key[-1]
        if f"{name}_{'b' if suffix == 'a' else 'a'}" in row:
            side[suffix][name] = _number(value, key, where)
    return side["a"], side["b"]


def load_battles(path: str | Path) -> BattleFile:
    """The battles of ``path`` (see the module doc); ``ConfigError`` naming the line and field."""
    rows = list(read_records(path))
    if not rows:
        raise ConfigError(f"{path}: no battles")
    battles: list[Battle] = []
    keys: list[float] = []
    ignored: set[str] = set()
    for position, (row, where) in enumerate(rows):
        a, b = _name(row, "model_a", where), _name(row, "model_b", where)
        if a == b:
            raise ConfigError(f"{where}: fields 'model_a' and 'model_b' name the same system")
        winner = _winner(row, a, b, where)
        item_key = next((k for k in ITEM_FIELDS if row.get(k) not in (None, "")), None)
        item = _name(row, item_key, where) if item_key else f"battle-{position + 1}"
        order_key = next((k for k in ORDER_FIELDS if row.get(k) not in (None, "")), None)
        keys.append(_number(row[order_key], order_key, where) if order_key else position)
        features_a, features_b = _features(row, where)
        dimension = row.get("dimension")
        battles.append(
            Battle(a, b, winner, item, "" if dimension in (None, "") else str(dimension),
                   0, features_a, features_b)
        )  # fmt: skip
        ignored.update(k for k in row if k not in KNOWN and not k.endswith(("_a", "_b")))
    # the judging order: by the given order (stable for equal keys), numbered from 0
    ranked = sorted(range(len(battles)), key=lambda i: keys[i])
    place = {index: rank for rank, index in enumerate(ranked)}
    battles = [
        Battle(b.system_a, b.system_b, b.winner, b.item_id, b.dimension, place[i],
               b.features_a, b.features_b)
        for i, b in enumerate(battles)
    ]  # fmt: skip
    # every feature named anywhere; style control drops, with the reason, one a battle lacks
    features = sorted({n for b in battles for n in (*b.features_a, *b.features_b)})
    return BattleFile(battles=battles, features=features, ignored=sorted(ignored))


def rate_battles(
    loaded: BattleFile,
    *,
    anchor: str | None = None,
    n_resamples: int = DEFAULT_RATING_RESAMPLES,
    seed: int = 0,
    confidence: float = DEFAULT_RATING_CONFIDENCE,
    elo_point: EloPoint = "final",
) -> dict[str, Any]:
    """``{"battles", "features", "ignored_fields", "dimensions": {dimension: arena summary}}``
    (dimension "" when the file names none); the summary of each is ``arena_summary``."""
    by_dimension: dict[str, list[Battle]] = {}
    for battle in loaded.battles:
        by_dimension.setdefault(battle.dimension, []).append(battle)
    dimensions = {}
    for dimension, battles in sorted(by_dimension.items()):
        names = {n for b in battles for n in (b.system_a, b.system_b)}
        dimensions[dimension] = arena_summary(
            battles,
            anchor=anchor if anchor in names else None,
            style_features=loaded.features,
            n_resamples=n_resamples,
            seed=seed,
            confidence=confidence,
            elo_point=elo_point,
        )
        if anchor is not None and anchor not in names:
            dimensions[dimension]["anchor_note"] = f"anchor {anchor!r} has no battle here"
    return {
        "battles": len(loaded.battles),
        "features": loaded.features,
        "ignored_fields": loaded.ignored,
        "dimensions": dimensions,
    }
