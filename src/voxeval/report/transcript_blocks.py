"""What a multi-turn system's report says about parts judged without their audio: the user
turns without a recording and the released replies replayed as a transcript alone
(``transcript_only`` of the summary), and the warnings about cues a judge cannot perceive
from what it was given (``judge.warnings``)."""

from __future__ import annotations

from collections.abc import Mapping

from voxeval.json_types import JSONReadObject
from voxeval.report.blocks import Block, BulletList, Heading, Paragraph
from voxeval.report.json_fields import as_int, entries


def transcript_only_blocks(entry: JSONReadObject) -> list[Block]:
    counts = entry.get("transcript_only")
    judge = entry.get("judge")
    warnings = judge.get("warnings") if isinstance(judge, Mapping) else None
    if not isinstance(counts, Mapping) and not warnings:
        return []
    blocks: list[Block] = [Heading(3, "Transcript-only parts")]
    if isinstance(counts, Mapping):
        turns = as_int(counts.get("turns") or 0)
        blocks.append(
            Paragraph(
                f"Of {turns} turns, {as_int(counts.get('user_turns') or 0)} user turns have no "
                f"recording and {as_int(counts.get('replies') or 0)} replies are released "
                "transcripts without audio: the judges read their text, and an audio judge "
                "hears them spoken from it."
            )
        )
    if warnings:
        blocks.append(BulletList([f"Warning: {w}" for w in entries(warnings)]))
    return blocks
