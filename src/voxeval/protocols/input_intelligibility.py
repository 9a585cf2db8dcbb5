"""How intelligible the user side of a single-turn run was: an ASR's word error rate on each
rendered query's audio against the query text, and the audio's DNSMOS, per condition and per
speaker profile.

A system cannot answer a query it cannot hear, so a condition or a voice whose input the ASR
already mishears explains part of that condition's or voice's drop. Each rendered item is
transcribed once (the ASR is cached on disk, so a later report does not transcribe again), not
once per system. Per condition and per (condition, profile): the corpus WER (errors over
reference words), the mean and median per-item WER with a confidence interval that resamples
whole queries, n, and, when a MOS model is given, the mean DNSMOS overall (OVRL) with its
interval. The clean condition's profiles are held against ``WER_LIMIT``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from statistics import median
from typing import Any

from voxeval.analysis.bootstrap import metric_stats
from voxeval.audio import read_audio
from voxeval.benchmarks.build_manifest import RenderedQuery
from voxeval.config import ProviderSpec
from voxeval.json_types import JSONObject, JSONValue
from voxeval.providers.base import ASR, MOS
from voxeval.providers.factory import CacheChoice, availability, create_provider
from voxeval.scoring.text.word_errors import word_errors

# A rendered profile whose clean queries the input ASR mishears more than this (corpus WER)
# is flagged: results for that voice measure hearing as much as answering.
WER_LIMIT = 0.15
# The ASR that measures the input by default: the stronger of the two packaged Whisper models.
INPUT_ASR = "whisper-base"
FALLBACK_INPUT_ASR = "whisper-tiny-en"
INTELLIGIBILITY_FILE = "intelligibility.json"  # a built suite's clean-query check


def input_asr_spec(scoring_asr: str | ProviderSpec | None) -> str | ProviderSpec:
    """The ASR that measures the input: Whisper base when it is installed (a check that
    itself mishears would blame the voices), otherwise the scoring ASR, otherwise tiny.en."""
    if availability("asr", ProviderSpec(provider=INPUT_ASR)).available:
        return INPUT_ASR
    return scoring_asr or FALLBACK_INPUT_ASR


@dataclass(frozen=True)
class _Heard:
    query_id: str
    errors: int
    ref_words: int
    ovrl: float | None


def _stats(rows: list[_Heard], seed: int) -> JSONObject:
    rates = [row.errors / row.ref_words for row in rows]
    clusters = [row.query_id for row in rows]
    stat = metric_stats(rates, clusters=clusters, seed=seed)
    errors = sum(row.errors for row in rows)
    words = sum(row.ref_words for row in rows)
    result: dict[str, Any] = {
        **stat,
        "corpus_wer": errors / words,
        "median": median(rates),
        "errors": errors,
        "ref_words": words,
    }
    scored = [row for row in rows if row.ovrl is not None]
    if scored:
        result["dnsmos_ovrl"] = metric_stats(
            [float(row.ovrl) for row in scored if row.ovrl is not None],
            clusters=[row.query_id for row in scored],
            seed=seed,
        )
    return result


def corpus_wer(stat: JSONValue) -> float:
    """The ``corpus_wer`` of one entry made by ``_stats``."""
    wer = stat.get("corpus_wer") if isinstance(stat, dict) else None
    if not isinstance(wer, int | float):
        raise TypeError(f"not an input WER entry: {stat!r}")  # _stats always sets it
    return float(wer)


def input_error_rates(
    items: Mapping[str, RenderedQuery],
    asr: ASR,
    *,
    seed: int = 0,
    language: str = "en",
    mos: MOS | None = None,
) -> dict[str, JSONObject]:
    """``{condition: {corpus_wer, mean, ci_low, ci_high, median, n, errors, ref_words,
    [dnsmos_ovrl], by_profile: {profile: the same}}}`` over the rendered items whose query
    text has words; every CI resamples queries. The clean condition also carries
    ``wer_limit`` and ``over_limit`` (its profiles whose corpus WER exceeds it)."""
    rows: dict[str, list[_Heard]] = defaultdict(list)
    by_profile: dict[str, dict[str, list[_Heard]]] = defaultdict(lambda: defaultdict(list))
    for item in items.values():
        audio = read_audio(item.audio_path)
        heard = asr.transcribe(audio, language=language).text
        counts = word_errors(item.query.text, heard, language)
        if not counts.ref_words:
            continue
        ovrl = mos.predict(audio).overall if mos is not None else None
        row = _Heard(item.query.id, counts.errors, counts.ref_words, ovrl)
        rows[item.condition].append(row)
        by_profile[item.condition][item.profile].append(row)
    result: dict[str, JSONObject] = {}
    for condition, condition_rows in sorted(rows.items()):
        entry = _stats(condition_rows, seed)
        profiles = {
            profile: _stats(profile_rows, seed)
            for profile, profile_rows in sorted(by_profile[condition].items())
        }
        entry["by_profile"] = dict(profiles)
        if condition == "clean":
            entry["wer_limit"] = WER_LIMIT
            entry["over_limit"] = [
                profile for profile, stat in profiles.items() if corpus_wer(stat) > WER_LIMIT
            ]
        result[condition] = entry
    return result


def check_built_suite(
    items: list[RenderedQuery],
    *,
    wer_limit: float = WER_LIMIT,
    seed: int = 0,
    cache: CacheChoice = "default",
) -> JSONObject:
    """The clean queries of a built suite heard by Whisper base (tiny.en when base is not
    installed), with DNSMOS when speechmos is: ``{asr, wer_limit, overall, by_profile,
    over_limit}`` where ``over_limit`` lists the profiles whose clean corpus WER exceeds
    ``wer_limit``; ``{not_run: reason}`` when the suite has no clean synthesized query or no
    local ASR can run."""
    clean = {
        item.item_id: item
        for item in items
        if item.condition == "clean" and item.entry.get("voice") != "recorded"
    }
    if not clean:
        return {"not_run": "the build has no clean synthesized query"}
    spec = INPUT_ASR
    if not availability("asr", ProviderSpec(provider=spec)).available:
        spec = FALLBACK_INPUT_ASR
        found = availability("asr", ProviderSpec(provider=spec))
        if not found.available:
            return {"not_run": f"no local Whisper model: {found.reason}"}
    asr = create_provider("asr", spec, cache=cache)
    dnsmos = ProviderSpec(provider="dnsmos")
    mos = None
    if availability("mos", dnsmos).available:
        mos = create_provider("mos", dnsmos, cache=cache)
    rates = input_error_rates(clean, asr, seed=seed, mos=mos).get("clean")
    if rates is None:
        return {"not_run": "no clean query has words to check"}
    by_profile = rates.pop("by_profile")
    if not isinstance(by_profile, dict):
        raise TypeError("input_error_rates: by_profile is not a mapping")  # built above
    return {
        "asr": spec,
        "wer_limit": wer_limit,
        "overall": {k: v for k, v in rates.items() if k not in ("wer_limit", "over_limit")},
        "by_profile": by_profile,
        "over_limit": [p for p, stat in by_profile.items() if corpus_wer(stat) > wer_limit],
    }
