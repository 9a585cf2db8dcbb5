"""How intelligible the user side of a single-turn run was: the scoring ASR's word error rate
on each rendered query's audio against the query text, per condition.

A system cannot answer a query it cannot hear, so a condition whose input the scoring ASR
already mishears explains part of that condition's drop. Each rendered item is transcribed
once (the scoring ASR is cached on disk, so a later report does not transcribe again), not
once per system. Per condition: the corpus WER (errors over reference words), the mean and
median per-item WER with a confidence interval that resamples whole queries, and n."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from statistics import median
from typing import Any

from voxeval.analysis.bootstrap import metric_stats
from voxeval.audio import read_audio
from voxeval.benchmarks.build_manifest import RenderedQuery
from voxeval.providers.base import ASR
from voxeval.scoring.word_errors import word_errors


def input_error_rates(
    items: Mapping[str, RenderedQuery], asr: ASR, *, seed: int = 0, language: str = "en"
) -> dict[str, dict[str, Any]]:
    """``{condition: {corpus_wer, mean, ci_low, ci_high, median, n, errors, ref_words}}`` over
    the rendered items whose query text has words; the CI resamples queries."""
    per_condition: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    for item in items.values():
        heard = asr.transcribe(read_audio(item.audio_path), language=language).text
        counts = word_errors(item.query.text, heard, language)
        if counts.ref_words:
            per_condition[item.condition].append((item.query.id, counts.errors, counts.ref_words))
    result: dict[str, dict[str, Any]] = {}
    for condition, rows in sorted(per_condition.items()):
        rates = [errors / words for _, errors, words in rows]
        stat = metric_stats(rates, clusters=[query for query, _, _ in rows], seed=seed)
        errors = sum(e for _, e, _ in rows)
        words = sum(w for _, _, w in rows)
        result[condition] = {
            **stat,
            "corpus_wer": errors / words,
            "median": median(rates),
            "errors": errors,
            "ref_words": words,
        }
    return result
