"""The run format's models: what each artifact holds, errors that name the file and the
field, and dumps that keep the bytes a file had (ints stay ints, keys keep their order)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voxeval.runformat import (
    ArtifactFormatError,
    CallFile,
    MetricScore,
    ReplyFile,
    RunManifest,
    RunSummary,
    UnitScores,
    read_json_artifact,
    read_yaml_artifact,
    record_data,
    summary_text,
)

REPLY = {
    "audio_s": 1.5,
    "condition": "clean",
    "details": {"replayed": True},
    "has_audio": True,
    "item_id": "q2__recorded__clean",
    "noise": None,
    "profile": "recorded",
    "query_id": "q2",
    "system": "recorded",
    "text": "It is sunny today in Paris.",
    "timing": {"wall_s": 0.0007},
    "trial": 0,
    "voice": "recorded",
}


def test_a_reply_reads_typed_and_keeps_what_a_system_added(tmp_path: Path) -> None:
    path = tmp_path / "reply.json"
    path.write_text(json.dumps({**REPLY, "vendor_field": [1, 2]}), encoding="utf-8")
    reply = read_json_artifact(ReplyFile, path)
    assert reply is not None
    assert (reply.item_id, reply.trial, reply.audio_s, reply.system_fault) == (
        "q2__recorded__clean",
        0,
        1.5,
        None,
    )
    assert reply.details == {"replayed": True}
    assert reply.to_data()["vendor_field"] == [1, 2]  # unknown fields survive a rewrite


def test_a_malformed_artifact_names_the_file_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "items" / "q1" / "tiny" / "0" / "reply.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({**REPLY, "trial": "first"}), encoding="utf-8")
    with pytest.raises(ArtifactFormatError) as caught:
        read_json_artifact(ReplyFile, path)
    assert str(caught.value).startswith(f"{path}: trial: ")
    scores = tmp_path / "scores.json"
    scores.write_text(json.dumps({"wer": {"value": "low", "pending": False}}), encoding="utf-8")
    with pytest.raises(ArtifactFormatError, match=r"scores\.json: wer\.value: "):
        read_json_artifact(UnitScores, scores)
    broken = tmp_path / "call.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(ArtifactFormatError, match=r"call\.json: not valid JSON"):
        read_json_artifact(CallFile, broken)


def test_a_missing_file_is_none_not_an_error(tmp_path: Path) -> None:
    assert read_json_artifact(ReplyFile, tmp_path / "reply.json") is None


def test_writers_refuse_what_does_not_validate_naming_file_and_field(tmp_path: Path) -> None:
    where = tmp_path / "call.json"
    with pytest.raises(ArtifactFormatError, match=r"call\.json: duration_s: "):
        record_data(CallFile, {"end_reason": "user_end_call", "duration_s": "long"}, where)
    with pytest.raises(ArtifactFormatError, match=r"summary\.json: suite: Field required"):
        summary_text({"run_id": "r", "seed": 0, "systems": {}}, tmp_path / "summary.json")


def test_record_data_keeps_ints_floats_and_key_order() -> None:
    scores = {"wer": {"value": 0, "passed": None, "details": {"errors": 2}, "error": None}}
    dumped = record_data(UnitScores, scores, "scores.json")
    assert json.dumps(dumped, sort_keys=True) == json.dumps(scores, sort_keys=True)  # 0 stays 0
    summary = {
        "run_id": "r-1",
        "suite": {"name": "two", "protocol": "single_turn", "description": ""},
        "seed": 0,
        "systems": {
            "tiny": {
                "overall": {"wer": {"mean": 0.5, "ci_low": None, "ci_high": None, "n": 2}},
                "units": {"done": 2, "failed": 0, "pending": 0},
                "by_pf_subcategory": {"tone": {}},  # a protocol's own section
            }
        },
        "pairwise": {"unit": "query", "pairs": []},  # a comparison step's section
        "costs": None,
    }
    text = summary_text(summary, "summary.json")
    assert text == json.dumps(summary, indent=2) + "\n"
    parsed = RunSummary.model_validate(summary)
    assert parsed.systems["tiny"].overall["wer"].n == 2
    assert parsed.section("pairwise") == {"unit": "query", "pairs": []}


def test_a_metric_score_that_did_not_run_has_no_value() -> None:
    score = MetricScore.model_validate({"value": None, "error": "no judge", "pending": True})
    assert (score.value, score.error, score.pending, score.details) == (None, "no judge", True, {})


def test_a_run_file_without_format_version_is_version_1(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_text("run_id: old-1\ncreated_at: '2026-01-01T00:00:00+00:00'\nseed: 3\n")
    manifest = read_yaml_artifact(RunManifest, path)
    assert manifest is not None
    assert (manifest.format_version, manifest.run_id, manifest.seed) == (1, "old-1", 3)
    path.write_text("run_id: ''\n")
    with pytest.raises(ArtifactFormatError, match=r"run\.yaml: run_id: "):
        read_yaml_artifact(RunManifest, path)
