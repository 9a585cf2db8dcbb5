"""The report's "Costs" section: the run priced with a price table (``summary["costs"]``,
also written to ``report/costs.json`` by ``voxeval report`` and ``voxeval costs``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from voxeval.report.blocks import Block, BulletList, Heading, Paragraph, TableBlock


def usd(value: Any) -> str:
    return "–" if value is None else f"${float(value):.4f}"


def _priced(bucket: Mapping[str, Any]) -> str:
    cost = usd(bucket.get("cost_usd"))
    return cost if bucket.get("complete", True) else f"{cost} + unpriced"


def cost_blocks(costs: Any) -> list[Block]:
    """Totals per system (and per unit), per component and per model, the price table used
    and the models it did not price (none when the summary has no costs)."""
    if not isinstance(costs, Mapping):
        return []
    total = costs.get("total") or {}
    blocks: list[Block] = [Heading(2, "Costs")]
    sources = (costs.get("prices") or {}).get("sources") or []
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
    systems = costs.get("by_system") or {}
    if systems:
        rows = [
            [
                name,
                str(entry.get("units", 0)),
                _priced(entry),
                usd(entry.get("cost_per_unit_usd")),
                ", ".join(
                    f"{component} {_priced(part)}"
                    for component, part in (entry.get("by_component") or {}).items()
                ),
            ]
            for name, entry in systems.items()
        ]
        blocks.append(TableBlock(["system", "units", "cost", "per unit", "by component"], rows))
    models = costs.get("by_model") or {}
    if models:
        rows = [
            [
                label,
                str(m.get("calls", 0)),
                f"{m.get('prompt_tokens', 0)}/{m.get('completion_tokens', 0)}",
                f"{m.get('prompt_audio_tokens', 0)}/{m.get('completion_audio_tokens', 0)}",
                f"{float(m.get('audio_in_s') or 0):.1f}/{float(m.get('audio_out_s') or 0):.1f}",
                usd(m.get("cost_usd")) if m.get("price") else "unpriced",
            ]
            for label, m in models.items()
        ]
        header = ["model", "calls", "tokens in/out", "audio tok in/out", "audio s in/out"]
        blocks.append(TableBlock([*header, "cost"], rows))
    unpriced = costs.get("unpriced") or {}
    if unpriced:
        blocks.append(
            Paragraph(
                "Unpriced (no entry of the price table matches; not in the totals, not free):"
            )
        )
        blocks.append(
            BulletList(
                [
                    f"{label} — used by {', '.join(u.get('components') or [])}: "
                    f"{u.get('calls', 0)} calls"
                    for label, u in unpriced.items()
                ]
            )
        )
    return blocks
