"""The shipped mtalk-mini suite: 54 dialogues covering every dimension x scenario twice, with
taxonomy labels, 7-9 criteria at the right levels, and only tags the renderer knows."""

from __future__ import annotations

from collections import Counter

from voxeval.benchmarks.mtalk.dialogue import CRITERION_ID
from voxeval.benchmarks.mtalk.dialogue_suite import load_dialogue_suite
from voxeval.benchmarks.mtalk.mtalk_build import check_tags
from voxeval.benchmarks.mtalk.mtalk_mini import MTALK_MINI, MTALK_MINI_PATH
from voxeval.benchmarks.mtalk.mtalk_tags import parse_turn
from voxeval.benchmarks.mtalk.mtalk_taxonomy import DIMENSIONS, SCENARIO_IDS, tier1_ids, tier2_ids
from voxeval.benchmarks.suite_info import SUITES


def _suite():  # type: ignore[no-untyped-def]
    return load_dialogue_suite("mtalk-mini")


def test_registered_as_multi_turn_suite() -> None:
    assert "mtalk-mini" in SUITES.names()
    assert MTALK_MINI.protocol == "multi_turn"
    assert MTALK_MINI.path == MTALK_MINI_PATH and MTALK_MINI_PATH.is_file()


def test_every_dimension_and_scenario_twice() -> None:
    dialogues = _suite().dialogues
    assert len(dialogues) == 54
    cells = Counter((d.dimension, d.scenario) for d in dialogues)
    assert set(cells) == {(dim, sc) for dim in DIMENSIONS for sc in SCENARIO_IDS}
    assert set(cells.values()) == {2}
    assert len({d.id for d in dialogues}) == 54


def test_turns_and_capabilities() -> None:
    for d in _suite().dialogues:
        assert 2 <= len(d.turns) <= 3, d.id
        assert d.capability is not None and d.capability.tier2 is not None, d.id
        assert d.capability.tier1 in tier1_ids(d.dimension), d.id
        assert d.capability.tier2 in tier2_ids(d.dimension, d.capability.tier1), d.id
    # every tier-1 capability of every dimension is exercised
    used = {(d.dimension, d.capability.tier1) for d in _suite().dialogues if d.capability}
    assert used == {(dim, t1) for dim in DIMENSIONS for t1 in tier1_ids(dim)}


def test_criteria_counts_levels_and_shared_texts() -> None:
    dialogues = _suite().dialogues
    general = {tuple((c.id, c.text) for c in d.rubrics.general) for d in dialogues}
    assert len(general) == 1  # one shared general list
    for d in dialogues:
        rubrics = d.rubrics
        assert 7 <= len(rubrics.all()) <= 9, d.id
        assert len(rubrics.used()) == len(rubrics.all()), d.id  # all accepted
        assert [c.id for c in rubrics.general] == ["criteria_s_1", "criteria_s_2", "criteria_s_3"]
        assert [c.id for c in rubrics.dimension] == ["criteria_m_1", "criteria_m_2"]
        assert 2 <= len(rubrics.sample) <= 4, d.id
        assert [c.id for c in rubrics.sample] == [
            f"criteria_d_{n}" for n in range(1, len(rubrics.sample) + 1)
        ]
        assert all(c.status == "accepted" for c in rubrics.sample)
        assert all(CRITERION_ID.match(c.id) for c in rubrics.all())
    per_dimension = {d.dimension: tuple(c.text for c in d.rubrics.dimension) for d in dialogues}
    assert len(set(per_dimension.values())) == 3  # dimension criteria differ by dimension
    for d in dialogues:
        assert tuple(c.text for c in d.rubrics.dimension) == per_dimension[d.dimension]


def test_tags_fit_each_dimension_and_are_all_renderable() -> None:
    dialogues = _suite().dialogues
    check_tags(dialogues, "mtalk-mini")  # raises on any unknown tag
    kinds: dict[str, Counter[str]] = {dim: Counter() for dim in DIMENSIONS}
    for d in dialogues:
        for turn in d.turns:
            for piece in parse_turn(turn.transcript).pieces:
                kinds[d.dimension][getattr(piece, "kind", "words")] += 1
    # every paralinguistic dialogue carries cues; every ambient dialogue sounds or a 2nd talker
    for d in dialogues:
        tags = [t for turn in d.turns for t in turn.tags]
        if d.dimension == "paralinguistic":
            assert any(t.startswith("<") or t in ("[sigh]", "[laughs]", "[cough]") for t in tags)
        if d.dimension == "ambient":
            assert any(t.startswith("[") or t.startswith("<Speaker B") for t in tags), d.id
        if d.dimension == "semantic":
            assert tags == [], d.id
    assert kinds["ambient"]["ambient"] >= 20 and kinds["ambient"]["speaker"] >= 10
    assert kinds["paralinguistic"]["delivery"] >= 20 and kinds["paralinguistic"]["vocal"] >= 8
    assert kinds["paralinguistic"]["instruction"] >= 5
