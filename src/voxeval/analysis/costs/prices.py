"""Price tables: what a call to a model costs, by provider kind, provider and model (globs).

A table is a YAML file (see the packaged example ``data/prices.yaml``): ``models`` is a list of
entries, each a kind/provider/model pattern with per-1M-token, per-minute-of-audio and
per-request prices. The first entry matching a usage record prices it; a record no entry
matches is *unpriced*, which reports say, rather than free.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from voxeval.config import format_validation_error
from voxeval.errors import ConfigError

DEFAULT_PRICES = Path(__file__).parents[1] / "data" / "prices.yaml"
PRICE_FIELDS = (
    "input_per_1m_tokens",
    "output_per_1m_tokens",
    "audio_input_per_1m_tokens",
    "audio_output_per_1m_tokens",
    "audio_in_per_minute",
    "audio_out_per_minute",
    "per_request",
)


class PriceEntry(BaseModel):
    """Prices of the models matching ``kind``/``provider``/``model`` (USD; absent = 0)."""

    model_config = ConfigDict(extra="forbid")
    kind: str
    provider: str = "*"
    model: str = "*"
    input_per_1m_tokens: float | None = Field(default=None, ge=0)
    output_per_1m_tokens: float | None = Field(default=None, ge=0)
    # audio tokens; None: charged as text tokens
    audio_input_per_1m_tokens: float | None = Field(default=None, ge=0)
    audio_output_per_1m_tokens: float | None = Field(default=None, ge=0)
    audio_in_per_minute: float | None = Field(default=None, ge=0)
    audio_out_per_minute: float | None = Field(default=None, ge=0)
    per_request: float | None = Field(default=None, ge=0)

    def matches(self, kind: str, provider: str, model: str) -> bool:
        return (
            fnmatchcase(kind, self.kind)
            and fnmatchcase(provider, self.provider)
            and fnmatchcase(model, self.model)
        )

    def pattern(self) -> str:
        return f"{self.kind}:{self.provider}:{self.model}"

    def prices(self) -> dict[str, float]:
        return {name: value for name in PRICE_FIELDS if (value := getattr(self, name)) is not None}


class PriceFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    as_of: str | None = None
    currency: str = "USD"
    example: bool = False
    note: str = ""
    # a user table falls back on the packaged one (embedded models at 0) unless false
    include_defaults: bool = True
    models: list[PriceEntry] = Field(default_factory=list)


@dataclass(frozen=True)
class PriceTable:
    """Entries in matching order and where they came from (for reports)."""

    entries: tuple[PriceEntry, ...]
    sources: tuple[dict[str, Any], ...]
    currency: str = "USD"

    def match(self, kind: str, provider: str, model: str) -> PriceEntry | None:
        return next((e for e in self.entries if e.matches(kind, provider, model)), None)

    def describe(self) -> dict[str, Any]:
        return {"currency": self.currency, "sources": list(self.sources)}


def read_price_file(path: Path) -> PriceFile:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the price table ({exc})") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc})") from exc
    try:
        return PriceFile.model_validate(raw if raw is not None else {})
    except ValidationError as exc:
        raise ConfigError(format_validation_error(f"price table {path}", exc)) from exc


def load_price_table(path: str | Path | None = None) -> PriceTable:
    """The table of ``path`` (then the packaged defaults unless it says
    ``include_defaults: false``), or the packaged example table alone."""
    files: list[tuple[str, PriceFile]] = []
    if path is not None:
        user = read_price_file(Path(path))
        files.append((str(path), user))
        if not user.include_defaults:
            return _table(files)
    files.append(("packaged example (voxeval/analysis/data/prices.yaml)", _defaults()))
    return _table(files)


def _defaults() -> PriceFile:
    return read_price_file(DEFAULT_PRICES)


def _table(files: list[tuple[str, PriceFile]]) -> PriceTable:
    currencies = {f.currency for _, f in files}
    if len(currencies) > 1:
        raise ConfigError(f"price tables in different currencies: {sorted(currencies)}")
    return PriceTable(
        entries=tuple(entry for _, f in files for entry in f.models),
        sources=tuple(
            {"file": name, "as_of": f.as_of, "example": f.example, "note": f.note}
            for name, f in files
        ),
        currency=files[0][1].currency,
    )
