"""Corpus WER and median beside the mean WER in a summary.

The mean of per-unit WERs lets one short reply with many insertions dominate (a 3-word
reference with 18 inserted words scores 6.0). The corpus WER pools the units instead: total
errors over total reference words, so each unit weighs by its length. It needs the ``errors``
and ``ref_words`` counts a WER metric stores in its details; a unit scored without them (e.g.
the failure value of a system fault) is left out of the pooled figure and counted in
``wer_corpus_missing``, never silently dropped.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from statistics import median
from typing import Any

from voxeval.store.records import ScoreRow

# The groupings of ``standard_summary`` that get the corpus figures, and the row attribute
# each groups by.
_GROUPINGS = {"by_category": "category", "by_condition": "condition"}


def corpus_wer_fields(rows: Iterable[ScoreRow]) -> dict[str, Any]:
    """``wer_corpus`` (sum of errors / sum of reference words, None without counts), the
    pooled ``errors`` and ``ref_words``, ``median`` of the unit values and
    ``wer_corpus_missing`` (units that ran without counts), over the rows that ran."""
    ran = [r for r in rows if r.ran and r.value is not None]
    counted = [r for r in ran if r.details.get("errors") is not None and r.details.get("ref_words")]
    errors = sum(int(r.details["errors"]) for r in counted)
    ref_words = sum(int(r.details["ref_words"]) for r in counted)
    return {
        "median": median(float(r.value or 0.0) for r in ran) if ran else None,
        "wer_corpus": errors / ref_words if ref_words else None,
        "errors": errors,
        "ref_words": ref_words,
        "wer_corpus_missing": len(ran) - len(counted),
    }


def add_corpus_wer(
    summary: Mapping[str, dict[str, Any]], rows: Iterable[ScoreRow], metric: str
) -> None:
    """Add the corpus fields to ``metric``'s stat in every system's ``overall``,
    ``by_category`` and ``by_condition`` of a ``standard_summary`` result (in place)."""
    metric_rows: dict[str, list[ScoreRow]] = defaultdict(list)
    for row in rows:
        if row.metric == metric:
            metric_rows[row.system].append(row)
    for system, entry in summary.items():
        own = metric_rows.get(system, [])
        stat = (entry.get("overall") or {}).get(metric)
        if isinstance(stat, dict):
            stat.update(corpus_wer_fields(own))
        for grouping, attr in _GROUPINGS.items():
            groups: dict[str, list[ScoreRow]] = defaultdict(list)
            for row in own:
                groups[str(getattr(row, attr))].append(row)
            for key, stats in (entry.get(grouping) or {}).items():
                stat = stats.get(metric)
                if isinstance(stat, dict):
                    stat.update(corpus_wer_fields(groups.get(key, [])))
