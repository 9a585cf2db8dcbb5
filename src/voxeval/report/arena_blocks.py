"""The "Arena ratings" section of the report, from the summary's ``arena`` entry
(``voxeval.protocols.multi_turn_arena.summarize_arena``): per dimension one table with the
online Elo (MTalk-Bench's headline) and the Bradley-Terry rating, each with its interval and
rank interval, the style-controlled rating, the battles, and the systems left unrated.

A rating whose interval is unbounded (the system won or lost every battle, or the battles do
not link every system) is written as such, never as a number with a zero-width interval or a
certain rank; the Bradley-Terry number of such a system is marked as set by the ridge."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from voxeval.report.blocks import Block, BulletList, Heading, Paragraph, TableBlock

HEADER = [
    "system",
    "Elo",
    "Elo 95% CI",
    "Elo rank (interval)",
    "Bradley-Terry",
    "BT 95% CI",
    "BT rank (interval)",
    "style-controlled BT",
    "battles",
]


def short_reason(reason: str) -> str:
    """ "won every battle: ..." -> "won every battle"; "not linked ... (groups: ...)" ->
    "not linked"."""
    return reason.split(":")[0].split(" (")[0].replace(" to every other system by the battles", "")


def rating_text(value: Any) -> str:
    return "–" if value is None else f"{float(value):.1f}"


def interval_text(entry: Mapping[str, Any] | None, note: str | None = None) -> str:
    """``[low, high]``, ``unbounded (why)``, or ``none (why)``."""
    if not entry:
        return "–"
    if entry.get("unbounded"):
        return f"unbounded ({short_reason(str(entry['unbounded']))})"
    low, high = entry.get("ci_low"), entry.get("ci_high")
    if low is None or high is None:
        return f"none ({note})" if note else "–"
    return f"[{float(low):.1f}, {float(high):.1f}]"


def rank_text(entry: Mapping[str, Any] | None) -> str:
    if not entry or entry.get("rank") is None:
        return "–"
    low, high = entry.get("rank_low"), entry.get("rank_high")
    return f"{entry['rank']} ({low}–{high})"


def _bt_rating(entry: Mapping[str, Any] | None) -> str:
    if not entry:
        return "–"
    text = rating_text(entry.get("rating"))
    return f"{text} (ridge-bound)" if entry.get("unbounded") else text


def dimension_blocks(dimension: str, block: Mapping[str, Any]) -> list[Block]:
    elo = (block.get("elo_intervals") or {}).get("systems") or {}
    elo_note = (block.get("elo_intervals") or {}).get("ci_note")
    plain_elo = block.get("elo") or {}
    bt_report = block.get("bt") or {}
    bt = bt_report.get("systems") or {}
    style = (block.get("style_controlled") or {}).get("systems") or {}
    unrated = block.get("unrated") or {}
    names = list(dict.fromkeys([*bt, *elo, *plain_elo]))
    names.sort(key=lambda n: -float((bt.get(n) or elo.get(n) or {}).get("rating") or 0.0))
    rows = []
    for name in names:
        e = elo.get(name)
        rows.append(
            [
                name,
                rating_text((e or {}).get("rating", plain_elo.get(name))),
                interval_text(e, elo_note),
                rank_text(e),
                _bt_rating(bt.get(name)),
                interval_text(bt.get(name), bt_report.get("ci_note")),
                rank_text(bt.get(name)),
                _bt_rating(style.get(name)),
                str((bt.get(name) or e or {}).get("battles", "–")),
            ]
        )
    for name in unrated:
        rows.append([name, "unrated", "–", "–", "unrated", "–", "–", "–", "0"])
    counts = block.get("comparisons") or {}
    compared = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counts.items())
    median = (block.get("elo_intervals") or {}).get("point") == "median"
    text = (
        f"{block.get('n_battles', 0)} battles ({block.get('ties', 0)} ties)"
        + (f"; comparisons {compared}" if compared else "")
        + ". Elo: online, K 4, from 1000, replayed in judging order"
        + (" (the rating is the median of the bootstrap, FastChat's convention)" if median else "")
        + "; Bradley-Terry: ties as half wins, "
        + (f"{bt_report['anchor']} = 1000" if bt_report.get("anchor") else "centred on 1000")
        + ". Intervals resample the compared items (dialogues); a rank (interval) counts only "
        "systems whose interval "
        "lies wholly above (below)."
    )
    blocks: list[Block] = [Heading(3, f"Arena: {dimension}"), Paragraph(text)]
    if rows:
        blocks.append(TableBlock(HEADER, rows))
    notes = []
    reasons = {n: r["unbounded"] for n, r in bt.items() if r.get("unbounded")}
    for name, reason in reasons.items():
        notes.append(f"{name}: unbounded: {reason}; its interval is open and its rank uncertain")
    for name, reason in unrated.items():
        notes.append(f"{name}: unrated: {reason}")
    if block.get("ratings_note"):
        notes.append(str(block["ratings_note"]))
    if notes:
        blocks.append(BulletList(notes))
    return blocks


def arena_blocks(arena: Any) -> list[Block]:
    if not isinstance(arena, Mapping) or not arena.get("dimensions"):
        return []
    blocks: list[Block] = [
        Heading(2, "Arena ratings"),
        Paragraph(
            f"Pairing {arena.get('pairing')}, mode {arena.get('mode')}, order disagreements "
            f"counted as {arena.get('disagreement')}. Per dimension: online Elo (the "
            "MTalk-Bench headline) and Bradley-Terry ratings with 95% intervals over "
            "dialogues and rank intervals."
        ),
    ]
    for dimension, block in arena["dimensions"].items():
        if isinstance(block, Mapping):
            blocks += dimension_blocks(str(dimension or "all"), block)
    return blocks
