"""What a run cost: its per-model usage records (``model_usage``) priced with a price table.

Nothing is called: the same finished run can be priced again with another table. A record
no entry matches is listed as unpriced with its amounts, and every total that misses it says
so (``complete: false``) instead of counting it as free.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from voxeval.analysis.costs.prices import PriceEntry, PriceTable, load_price_table
from voxeval.config import RunConfig
from voxeval.store.run_store import RunStore
from voxeval.store.usage import MODEL_AMOUNTS, model_label

PER_MILLION = 1_000_000.0


def record_cost(row: Mapping[str, Any], entry: PriceEntry) -> float:
    """USD of one usage record under ``entry``: text and audio tokens per million, audio
    seconds per minute, calls per request. Audio tokens are part of the token counts and are
    charged at the audio price when the entry has one."""
    prompt_audio = int(row.get("prompt_audio_tokens") or 0)
    completion_audio = int(row.get("completion_audio_tokens") or 0)
    prompt_text = int(row.get("prompt_tokens") or 0)
    completion_text = int(row.get("completion_tokens") or 0)
    cost = 0.0
    if entry.audio_input_per_1m_tokens is not None:
        prompt_text -= prompt_audio
        cost += prompt_audio * entry.audio_input_per_1m_tokens / PER_MILLION
    if entry.audio_output_per_1m_tokens is not None:
        completion_text -= completion_audio
        cost += completion_audio * entry.audio_output_per_1m_tokens / PER_MILLION
    cost += max(prompt_text, 0) * (entry.input_per_1m_tokens or 0.0) / PER_MILLION
    cost += max(completion_text, 0) * (entry.output_per_1m_tokens or 0.0) / PER_MILLION
    cost += float(row.get("audio_in_s") or 0.0) / 60.0 * (entry.audio_in_per_minute or 0.0)
    cost += float(row.get("audio_out_s") or 0.0) / 60.0 * (entry.audio_out_per_minute or 0.0)
    cost += int(row.get("calls") or 0) * (entry.per_request or 0.0)
    return cost


def _bucket() -> dict[str, Any]:
    return {"cost_usd": 0.0, "complete": True, "unpriced_calls": 0}


def _add(bucket: dict[str, Any], cost: float | None, calls: int) -> None:
    if cost is None:
        bucket["complete"] = False
        bucket["unpriced_calls"] += calls
    else:
        bucket["cost_usd"] += cost


def _content_order(row: Mapping[str, Any]) -> tuple[Any, ...]:
    names = tuple(str(row.get(k)) for k in ("unit_key", "system", "component", "kind"))
    models = (str(row.get("provider")), str(row.get("model")))
    return names + models + tuple(float(row.get(n) or 0) for n in MODEL_AMOUNTS)


def price_run(
    rows: Iterable[Mapping[str, Any]],
    table: PriceTable,
    units_by_system: Mapping[str, int],
) -> dict[str, Any]:
    """The cost document of a run: totals per system, component and model, the mean cost per
    unit of each system (over all its units, free ones included), and what was unpriced.
    ``units_by_system`` counts the run's units (the denominators)."""
    total = _bucket()
    by_system: dict[str, dict[str, Any]] = {}
    by_component: dict[str, dict[str, Any]] = {}
    by_model: dict[str, dict[str, Any]] = {}
    unpriced: dict[str, dict[str, Any]] = {}
    # in an order of the rows' contents, not of their commits (which follows concurrency and
    # the executor): the float sums below then come out the same to the last digit
    for row in sorted(rows, key=_content_order):
        kind, provider, model = str(row["kind"]), str(row["provider"]), str(row["model"])
        label = model_label(kind, provider, model)
        entry = table.match(kind, provider, model)
        cost = None if entry is None else record_cost(row, entry)
        calls = int(row.get("calls") or 0)
        system = by_system.setdefault(str(row["system"]), {**_bucket(), "by_component": {}})
        component = str(row["component"])
        for bucket in (
            total,
            system,
            system["by_component"].setdefault(component, _bucket()),
            by_component.setdefault(component, _bucket()),
        ):
            _add(bucket, cost, calls)
        model_entry = by_model.setdefault(
            label,
            {
                "kind": kind,
                "provider": provider,
                "model": model,
                "price": None if entry is None else entry.pattern(),
                "prices": None if entry is None else entry.prices(),
                "cost_usd": None if entry is None else 0.0,
                **dict.fromkeys(MODEL_AMOUNTS, 0),
            },
        )
        for name in MODEL_AMOUNTS:
            model_entry[name] += row.get(name) or 0
        if cost is not None:
            model_entry["cost_usd"] += cost
        else:
            missing = unpriced.setdefault(
                label,
                {"kind": kind, "provider": provider, "model": model, "components": []},
            )
            if component not in missing["components"]:
                missing["components"].append(component)
    for name, system in by_system.items():
        units = int(units_by_system.get(name, 0))
        system["units"] = units
        system["cost_per_unit_usd"] = system["cost_usd"] / units if units else None
    for name, units in units_by_system.items():  # systems that used nothing metered
        if name not in by_system:
            by_system[name] = {
                **_bucket(),
                "by_component": {},
                "units": int(units),
                "cost_per_unit_usd": 0.0 if units else None,
            }
    all_units = sum(int(n) for n in units_by_system.values())
    for missing in unpriced.values():
        used = by_model[model_label(missing["kind"], missing["provider"], missing["model"])]
        missing.update({name: used[name] for name in MODEL_AMOUNTS})
    return {
        "currency": table.currency,
        "prices": table.describe(),
        "total": {
            **total,
            "units": all_units,
            "cost_per_unit_usd": total["cost_usd"] / all_units if all_units else None,
        },
        "by_system": dict(sorted(by_system.items())),
        "by_component": dict(sorted(by_component.items())),
        "by_model": dict(sorted(by_model.items())),
        "unpriced": dict(sorted(unpriced.items())),
    }


def run_costs(store: RunStore, table: PriceTable) -> dict[str, Any]:
    """``price_run`` over a stored run: its model_usage records and its units per system."""
    units = Counter(unit.system for unit in store.units.records())
    return price_run(store.usage.model_rows(), table, units)


def run_price_table(config: RunConfig, prices: str | Path | None = None) -> PriceTable:
    """``prices`` when given, else the config's ``pricing`` file, else the packaged table."""
    return load_price_table(prices if prices is not None else config.pricing)
