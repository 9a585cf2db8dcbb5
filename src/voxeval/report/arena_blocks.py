"""The "Arena ratings" section of the report, from the summary's ``arena`` entry
(``voxeval.protocols.arena.multi_turn_arena.summarize_arena``): per dimension one table with the
online Elo (MTalk-Bench's headline) and the Bradley-Terry rating, each with its interval and
rank interval, the style-controlled rating, the battles, and the systems left unrated.

A rating whose interval is unbounded (the system won or lost every battle, or the battles do
not link every system) is written as such, never as a number with a zero-width interval or a
certain rank; the Bradley-Terry number of such a system is marked as set by the ridge."""

from __future__ import annotations

from collections.abc import Mapping

from voxeval.json_types import JSONReadObject, JSONReadValue
from voxeval.report.blocks import Block, BulletList, Heading, Paragraph, TableBlock
from voxeval.report.json_fields import as_float, section, sections

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


def rating_text(value: JSONReadValue) -> str:
    return "–" if value is None else f"{as_float(value):.1f}"


def interval_text(entry: JSONReadObject | None, note: str | None = None) -> str:
    """``[low, high]``, ``unbounded (why)``, or ``none (why)``."""
    if not entry:
        return "–"
    if entry.get("unbounded"):
        return f"unbounded ({short_reason(str(entry['unbounded']))})"
    low, high = entry.get("ci_low"), entry.get("ci_high")
    if low is None or high is None:
        return f"none ({note})" if note else "–"
    return f"[{as_float(low):.1f}, {as_float(high):.1f}]"


def rank_text(entry: JSONReadObject | None) -> str:
    if not entry or entry.get("rank") is None:
        return "–"
    low, high = entry.get("rank_low"), entry.get("rank_high")
    return f"{entry['rank']} ({low}–{high})"


def _bt_rating(entry: JSONReadObject | None) -> str:
    if not entry:
        return "–"
    text = rating_text(entry.get("rating"))
    return f"{text} (ridge-bound)" if entry.get("unbounded") else text


def dimension_blocks(dimension: str, block: JSONReadObject) -> list[Block]:
    elo = section(section(block.get("elo_intervals")).get("systems"))
    elo_note = section(block.get("elo_intervals")).get("ci_note")
    plain_elo = section(block.get("elo"))
    bt_report = section(block.get("bt"))
    bt = section(bt_report.get("systems"))
    style = section(section(block.get("style_controlled")).get("systems"))
    unrated = section(block.get("unrated"))
    names = list(dict.fromkeys([*bt, *elo, *plain_elo]))
    names.sort(key=lambda n: -as_float(section(bt.get(n) or elo.get(n)).get("rating") or 0.0))
    bt_note = bt_report.get("ci_note")
    rows = []
    for name in names:
        e = section(elo.get(name)) or None
        bt_entry = section(bt.get(name)) or None
        rows.append(
            [
                name,
                rating_text((e or {}).get("rating", plain_elo.get(name))),
                interval_text(e, None if elo_note is None else str(elo_note)),
                rank_text(e),
                _bt_rating(bt_entry),
                interval_text(bt_entry, None if bt_note is None else str(bt_note)),
                rank_text(bt_entry),
                _bt_rating(section(style.get(name)) or None),
                str((bt_entry or e or {}).get("battles", "–")),
            ]
        )
    for name in unrated:
        rows.append([name, "unrated", "–", "–", "unrated", "–", "–", "–", "0"])
    counts = section(block.get("comparisons"))
    compared = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counts.items())
    median = section(block.get("elo_intervals")).get("point") == "median"
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
    reasons = {n: r["unbounded"] for n, r in sections(bt) if r.get("unbounded")}
    for name, reason in reasons.items():
        notes.append(f"{name}: unbounded: {reason}; its interval is open and its rank uncertain")
    for name, reason in unrated.items():
        notes.append(f"{name}: unrated: {reason}")
    if block.get("ratings_note"):
        notes.append(str(block["ratings_note"]))
    if notes:
        blocks.append(BulletList(notes))
    return blocks


def arena_blocks(arena: JSONReadValue) -> list[Block]:
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
    for dimension, block in section(arena["dimensions"]).items():
        if isinstance(block, Mapping):
            blocks += dimension_blocks(str(dimension or "all"), block)
    return blocks
