"""The review file of drafted criteria: ids continue a dialogue's sample criteria, merging
takes only accepted and edited criteria (idempotent, conflicting ids refused), acceptance
counts golden, file errors name the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.benchmarks.rubric_fixtures import write_suite
from voxeval.benchmarks.mtalk.dialogue_suite import load_dialogue_suite
from voxeval.benchmarks.rubric_drafts import (
    RubricDrafts,
    acceptance,
    merge_accepted,
    next_sample_number,
    read_drafts,
    write_drafts,
)
from voxeval.errors import ConfigError


def drafted(tmp_path: Path) -> tuple[list, RubricDrafts]:
    dialogues = load_dialogue_suite(write_suite(tmp_path / "suite")).dialogues
    drafts = RubricDrafts(suite="tiny", per_dialogue=2)
    for dialogue in dialogues:
        drafts.add(dialogue, [f"Does {dialogue.id} a?", f"Does {dialogue.id} b?"], {})
    return dialogues, drafts


def test_ids_continue_the_existing_sample_criteria(tmp_path: Path) -> None:
    dialogues, drafts = drafted(tmp_path)
    assert [next_sample_number(d) for d in dialogues] == [1, 3, 1]
    ids = [(c.dialogue, c.id) for c in drafts.criteria]
    assert ids[2:4] == [("para-1", "criteria_d_3"), ("para-1", "criteria_d_4")]
    assert all(c.status == "pending" and c.draft == c.text for c in drafts.criteria)
    # the reviewer sees the dialogue without the suite: turns with tags, criteria it has
    para = drafts.dialogues["para-1"]
    assert para.turns[0].startswith("<anxious tone>")
    assert [c["id"] for c in para.context] == ["criteria_d_1"]  # the rejected one is not used


def test_merge_takes_accepted_and_edited_only(tmp_path: Path) -> None:
    dialogues, drafts = drafted(tmp_path)
    statuses = ["accepted", "rejected", "edited", "pending", "accepted", "accepted"]
    for criterion, status in zip(drafts.criteria, statuses, strict=True):
        criterion.status = status  # type: ignore[assignment]
    drafts.criteria[2].text = "Does it notice the user's anxiety?"
    merged, counts = merge_accepted(dialogues, drafts)
    assert counts == {"added": 4, "already_present": 0, "not_used": 2, "unknown_dialogue": 0}
    sample = {d.id: [(c.id, c.status, c.draft) for c in d.rubrics.sample] for d in merged}
    assert sample["sem-1"] == [("criteria_d_1", "accepted", None)]
    assert sample["para-1"] == [
        ("criteria_d_1", "accepted", None),
        ("criteria_d_2", "rejected", None),
        ("criteria_d_3", "edited", "Does para-1 a?"),
    ]
    assert [c.text for c in merged[1].rubrics.used("sample")] == [
        "Does it advise urgent care?",
        "Does it notice the user's anxiety?",
    ]
    # applying again adds nothing
    again, counts = merge_accepted(merged, drafts)
    assert counts["added"] == 0 and counts["already_present"] == 4
    assert again == merged
    # the same id holding another text is refused, naming both
    drafts.criteria[0].text = "Does it count the days?"
    with pytest.raises(ConfigError, match=r"sem-1.*criteria_d_1 already holds"):
        merge_accepted(merged, drafts)


def test_acceptance_counts_golden(tmp_path: Path) -> None:
    _, drafts = drafted(tmp_path)
    statuses = ["accepted", "rejected", "edited", "pending", "accepted", "accepted"]
    for criterion, status in zip(drafts.criteria, statuses, strict=True):
        criterion.status = status  # type: ignore[assignment]
    found = acceptance(drafts)
    overall = found["overall"]
    assert (overall.accepted, overall.edited, overall.rejected, overall.pending) == (3, 1, 1, 1)
    assert overall.rate == pytest.approx(4 / 5)
    rates = {k: v.rate for k, v in found["dimensions"].items()}
    assert rates == {"ambient": 1.0, "paralinguistic": 1.0, "semantic": 0.5}
    assert found["dimensions"]["paralinguistic"].pending == 1


def test_round_trip_and_errors_name_the_field(tmp_path: Path) -> None:
    _, drafts = drafted(tmp_path)
    path = tmp_path / "drafts.yaml"
    write_drafts(path, drafts)
    assert read_drafts(path) == drafts
    text = path.read_text().replace("criteria_d_3", "criteria_m_3", 1)
    path.write_text(text)
    with pytest.raises(ConfigError, match=r"drafts.yaml.*criteria.*not a sample-level id"):
        read_drafts(path)
    with pytest.raises(ConfigError, match="no such rubric drafts file"):
        read_drafts(tmp_path / "missing.yaml")
