"""Single-turn breakdowns by speaker, engine and noise category, and reply latency: one value
of each against a hand computation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from voxeval.benchmarks.build_manifest import RenderedQuery
from voxeval.benchmarks.wildspeech.spoken_query import SpokenQuery
from voxeval.protocols.single_turn_breakdowns import (
    add_breakdowns,
    answered_timings,
    item_attributes,
    latency_summary,
)
from voxeval.store.records import ScoreRow


def rendered(query: str, profile: str, condition: str, **entry: Any) -> RenderedQuery:
    key = f"{query}__{profile}__{condition}"
    base = {"key": key, "item_id": f"{query}__{profile}", **entry}
    spoken = SpokenQuery(id=query, text="hello there", category="II")
    return RenderedQuery(spoken, profile, condition, Path(f"{key}.wav"), base)


ITEMS = [
    rendered(
        "q1", "female-adult", "clean",
        profile_fields={"gender": "female", "age": "adult"}, engine="piper", voice="piper:a",
    ),
    rendered(
        "q1", "male-senior", "natural_noise",
        profile_fields={"gender": "male", "age": "senior"}, engine="espeak", voice="espeak:b",
        noise={"category": "traffic", "label": "street"},
    ),
    rendered(
        "q2", "female-adult", "human_noise",
        profile_fields={"gender": "female", "age": "adult"}, engine="piper", voice="piper:a",
        noise={"category": "babble", "label": "cafe"},
    ),
    rendered("q3", "recorded", "natural_noise", voice="recorded"),
]  # fmt: skip
ATTRS = {item.key: item_attributes(item) for item in ITEMS}
# (checklist, wer, errors, ref_words) per item
VALUES = {
    ITEMS[0].key: (8.0, 0.5, 1, 2),
    ITEMS[1].key: (4.0, 0.0, 0, 10),
    ITEMS[2].key: (6.0, 1.0, 4, 4),
    ITEMS[3].key: (2.0, 0.25, 1, 4),
}


def rows() -> list[ScoreRow]:
    out = []
    for item in ITEMS:
        checklist, wer, errors, ref_words = VALUES[item.key]
        details = {"errors": errors, "ref_words": ref_words}
        for metric, value, d in (("checklist", checklist, {}), ("wer", wer, details)):
            out.append(
                ScoreRow(item.key, "s", 0, item.condition, "II", metric, value, None, None, d)
            )
    return out


def test_item_attributes_name_speaker_engine_and_noise() -> None:
    assert ATTRS[ITEMS[1].key] == {
        "query_id": "q1",
        "profile": "male-senior",
        "gender": "male",
        "age": "senior",
        "timbre": "unspecified",
        "engine": "espeak",
        "condition": "natural_noise",
        "noise_category": "traffic",
    }
    assert ATTRS[ITEMS[0].key]["noise_category"] == "none"
    # a released recording: no TTS engine, its noise is its own condition
    assert ATTRS[ITEMS[3].key]["engine"] == "recorded"
    assert ATTRS[ITEMS[3].key]["noise_category"] == "natural_noise"


def test_golden_breakdowns_by_gender_engine_and_noise_category() -> None:
    all_rows = rows()
    clusters = {k: a["query_id"] for k, a in ATTRS.items()}
    entry: dict[str, Any] = {"overall": {"checklist": {}, "wer": {}}}
    add_breakdowns(entry, all_rows, ATTRS, seed=0, clusters=clusters, rates=set())
    female = entry["by_gender"]["female"]
    assert female["checklist"]["mean"] == pytest.approx((8.0 + 6.0) / 2)
    # corpus WER pools errors over reference words: (1 + 4) / (2 + 4); median of 0.5 and 1.0
    assert female["wer"]["wer_corpus"] == pytest.approx(5 / 6)
    assert female["wer"]["median"] == pytest.approx(0.75)
    assert entry["by_engine"]["espeak"]["checklist"]["mean"] == pytest.approx(4.0)
    assert entry["by_engine"]["recorded"]["wer"]["mean"] == pytest.approx(0.25)
    assert entry["by_noise_category"]["babble"]["checklist"]["mean"] == pytest.approx(6.0)
    assert entry["by_age"]["senior"]["checklist"]["n"] == 1
    # every item has the same (unset) timbre: one group says nothing and is left out
    assert "by_timbre" not in entry


def test_golden_latency_quantiles(tmp_path: Path) -> None:
    replies = [
        {"timing": {"total_s": 1.0, "wall_s": 1.1}},
        {"timing": {"total_s": 2.0, "first_audio_s": 0.5, "wall_s": 2.1}},
        {"timing": {"total_s": 3.0, "wall_s": 3.1}},
        {"timing": {"total_s": 4.0, "wall_s": 4.1}},
        {"timing": {"wall_s": 9.0}, "system_fault": {"cause": "timeout"}},  # not an answer
    ]
    files = []
    for i, reply in enumerate(replies):
        path = tmp_path / f"{i}.json"
        path.write_text(json.dumps(reply), encoding="utf-8")
        files.append(path)
    files.append(tmp_path / "missing.json")
    latency = latency_summary(answered_timings(files))
    # linear interpolation over 1, 2, 3, 4: p50 = 2.5, p90 = 3 + 0.7 = 3.7
    assert latency["total_s"] == {"p50": 2.5, "p90": pytest.approx(3.7), "n": 4}
    assert latency["first_audio_s"]["n"] == 1
    assert latency["wall_s"]["p90"] == pytest.approx(3.8)
