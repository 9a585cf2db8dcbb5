"""The costs command: price a finished run again with a price table (no system is called)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from voxeval.cli.common import console, friendly_errors, print_json
from voxeval.cli.main import app
from voxeval.report.cost_blocks import usd
from voxeval.report.writer import COSTS_JSON, write_report
from voxeval.runner.execute import open_run


def _cost(bucket: Mapping[str, Any]) -> str:
    cost = usd(bucket.get("cost_usd"))
    return cost if bucket.get("complete", True) else f"{cost} (+ unpriced)"


def print_costs(costs: Mapping[str, Any]) -> None:
    total = costs.get("total") or {}
    systems = Table("system", "units", "cost", "per unit", title="costs per system")
    for name, entry in (costs.get("by_system") or {}).items():
        systems.add_row(
            name, str(entry.get("units", 0)), _cost(entry), usd(entry.get("cost_per_unit_usd"))
        )
    systems.add_row(
        "total", str(total.get("units", 0)), _cost(total), usd(total.get("cost_per_unit_usd"))
    )
    console.print(systems)
    components = Table("component", "cost", title="costs per component")
    for name, entry in (costs.get("by_component") or {}).items():
        components.add_row(name, _cost(entry))
    console.print(components)
    models = Table("model", "price entry", "calls", "tokens in/out", "audio s in/out", "cost")
    for label, m in (costs.get("by_model") or {}).items():
        models.add_row(
            label,
            m.get("price") or "unpriced",
            str(m.get("calls", 0)),
            f"{m.get('prompt_tokens', 0)}/{m.get('completion_tokens', 0)}",
            f"{float(m.get('audio_in_s') or 0):.1f}/{float(m.get('audio_out_s') or 0):.1f}",
            usd(m.get("cost_usd")) if m.get("price") else "–",
        )
    console.print(models)
    for source in (costs.get("prices") or {}).get("sources") or []:
        note = " (example prices: check them)" if source.get("example") else ""
        console.print(f"prices: {source.get('file')} as of {source.get('as_of')}{note}")
    unpriced = costs.get("unpriced") or {}
    if unpriced:
        console.print(f"[yellow]unpriced (not in the totals): {', '.join(unpriced)}[/yellow]")


@app.command()
@friendly_errors
def costs(
    run_dir: Path = typer.Argument(..., help="a finished run folder"),
    prices: Path | None = typer.Option(
        None,
        "--prices",
        help="price table YAML (default: the config's pricing, else the packaged one)",
    ),
    as_json: bool = typer.Option(False, "--json", help="print costs.json instead of tables"),
) -> None:
    """Price a finished run from its recorded usage (no system is called): totals per
    system, component and model, per-unit means and what is unpriced. Writes
    report/costs.json and re-writes the report with these costs."""
    ctx = open_run(run_dir, console)
    write_report(ctx, prices)
    document = json.loads((ctx.store.report_dir / COSTS_JSON).read_text(encoding="utf-8"))
    if as_json:
        print_json(document)
        return
    print_costs(document)
    console.print(f"costs: {ctx.store.report_dir / COSTS_JSON}")
