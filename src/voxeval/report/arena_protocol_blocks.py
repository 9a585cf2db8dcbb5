"""How the multi-turn arena was run, from the summary's ``arena`` entry: the protocol mode
(voxeval's both orders or the reference's), the judge's input, the comparisons and parse
failures per dimension, and the warnings about cues the judge could not perceive. The
ratings themselves are reported beside it."""

from __future__ import annotations

from collections.abc import Mapping

from voxeval.json_types import JSONReadValue
from voxeval.report.blocks import Block, BulletList, Heading, Paragraph, TableBlock
from voxeval.report.json_fields import entries, section

COUNTS = ("done", "pending", "failed", "not_run", "judge_requests", "parse_failures")


def arena_protocol_blocks(arena: JSONReadValue) -> list[Block]:
    if not isinstance(arena, Mapping) or not arena:
        return []
    blocks: list[Block] = [
        Heading(2, "Arena protocol"),
        Paragraph(
            f"Protocol mode {arena.get('protocol', 'both_orders')}; judge input "
            f"{arena.get('mode', '?')}; pairing {arena.get('pairing', '?')}; order "
            f"disagreements: {arena.get('disagreement', '?')}."
        ),
    ]
    dims = section(arena.get("dimensions"))
    rows = []
    for dimension, entry in dims.items():
        counts = section(section(entry).get("comparisons"))
        rows.append([dimension or "-", *(str(counts.get(k, 0)) for k in COUNTS)])
    if rows:
        blocks.append(TableBlock(["dimension", *COUNTS], rows))
    failures = [
        [dimension or "-", system, str(n)]
        for dimension, entry in dims.items()
        for system, n in section(section(entry).get("parse_failures_by_system")).items()
    ]
    if failures:
        blocks += [
            Paragraph(
                "Judge parse failures per system: the malformed answers in the comparisons the "
                "system took part in (each comparison counts for both of its systems). Every "
                "malformed answer is counted: the provider does not retry by itself under a "
                "judge, so judge_attempts bounds the requests per verdict."
            ),
            TableBlock(["dimension", "system", "parse failures"], failures),
        ]
    if arena.get("warnings"):
        blocks.append(BulletList([f"Warning: {w}" for w in entries(arena["warnings"])]))
    return blocks
