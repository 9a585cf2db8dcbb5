"""The report's "Costs" section: the run priced with a price table (``summary["costs"]``,
also written to ``report/costs.json`` by ``voxeval report`` and ``voxeval costs``)."""

from __future__ import annotations

from collections.abc import Mapping

from voxeval.json_types import JSONReadObject, JSONReadValue
from voxeval.report.blocks import Block, BulletList, Heading, Paragraph, TableBlock
from voxeval.report.json_fields import as_float, entries, objects, section, sections


def usd(value: JSONReadValue) -> str:
    return "–" if value is None else f"${as_float(value):.4f}"


def _priced(bucket: JSONReadObject) -> str:
    cost = usd(bucket.get("cost_usd"))
    return cost if bucket.get("complete", True) else f"{cost} + unpriced"


def cost_blocks(costs: JSONReadValue) -> list[Block]:
    """Totals per system (and per unit), per component and per model, the price table used
    and the models it did not price (none when the summary has no costs)."""
    if not isinstance(costs, Mapping):
        return []
    total = section(costs.get("total"))
    blocks: list[Block] = [Heading(2, "Costs")]
    sources = objects(section(costs.get("prices")).get("sources"))
    named = "; ".join(
        f"{s.get('file')}"
        + (f" (as of {s['as_of']})" if s.get("as_of") else "")
        + (" — example prices, check them" if s.get("example") else "")
        for s in sources
    )
    blocks.append(
        Paragraph(
            f"Priced with: {named or 'no table'}. Total {_priced(total)} for "
            f"{total.get('units', 0)} units ({usd(total.get('cost_per_unit_usd'))} per unit). "
            "Re-price a finished run with `voxeval costs RUN --prices FILE`."
        )
    )
    systems = sections(costs.get("by_system"))
    if systems:
        rows = [
            [
                name,
                str(entry.get("units", 0)),
                _priced(entry),
                usd(entry.get("cost_per_unit_usd")),
                ", ".join(
                    f"{component} {_priced(part)}"
                    for component, part in sections(entry.get("by_component"))
                ),
            ]
            for name, entry in systems
        ]
        blocks.append(TableBlock(["system", "units", "cost", "per unit", "by component"], rows))
    models = sections(costs.get("by_model"))
    if models:
        rows = [
            [
                label,
                str(m.get("calls", 0)),
                f"{m.get('prompt_tokens', 0)}/{m.get('completion_tokens', 0)}",
                f"{m.get('prompt_audio_tokens', 0)}/{m.get('completion_audio_tokens', 0)}",
                f"{as_float(m.get('audio_in_s') or 0):.1f}/"
                f"{as_float(m.get('audio_out_s') or 0):.1f}",
                usd(m.get("cost_usd")) if m.get("price") else "unpriced",
            ]
            for label, m in models
        ]
        header = ["model", "calls", "tokens in/out", "audio tok in/out", "audio s in/out"]
        blocks.append(TableBlock([*header, "cost"], rows))
    unpriced = sections(costs.get("unpriced"))
    if unpriced:
        blocks.append(
            Paragraph(
                "Unpriced (no entry of the price table matches; not in the totals, not free):"
            )
        )
        blocks.append(
            BulletList(
                [
                    f"{label} — used by {', '.join(map(str, entries(u.get('components'))))}: "
                    f"{u.get('calls', 0)} calls"
                    for label, u in unpriced
                ]
            )
        )
    return blocks
