"""The built-in wild-mini suite: size, balance, checklists, assertions."""

from __future__ import annotations

from collections import Counter

from voxeval.benchmarks import WILD_MINI, load_query_suite, resolve_suite
from voxeval.benchmarks.wildspeech.spoken_query import CATEGORIES, PF_SUBCATEGORIES
from voxeval.scoring.replies.assertions import check


def test_registered_and_loadable_by_name() -> None:
    info = resolve_suite("wild-mini")
    assert info is WILD_MINI
    assert info.protocol == "single_turn"
    assert info.path.exists()
    assert len(load_query_suite("wild-mini")) >= 60


def test_balanced_over_categories_and_pf_subcategories() -> None:
    queries = load_query_suite("wild-mini")
    counts = Counter(q.category for q in queries)
    assert set(counts) == set(CATEGORIES)
    assert min(counts.values()) >= 12
    assert max(counts.values()) / min(counts.values()) <= 1.25
    pf = Counter(q.subcategory for q in queries if q.category == "PF")
    assert set(pf) == set(PF_SUBCATEGORIES)
    assert min(pf.values()) >= 3


def test_every_item_has_a_checklist_of_four_to_six() -> None:
    for q in load_query_suite("wild-mini"):
        assert 4 <= len(q.checklist) <= 6, q.id
        assert len(q.text.split()) < 50, q.id


def test_pf_items_that_need_prosody_carry_marks() -> None:
    for q in load_query_suite("wild-mini"):
        if q.category == "PF" and q.subcategory != "near-homophone":
            assert q.marks, q.id


def test_assertions_accept_a_good_answer_and_reject_a_bad_one() -> None:
    queries = {q.id: q for q in load_query_suite("wild-mini")}
    good = "It's about 384,000 kilometres away, so at 100 km/h you'd drive for about 160 days."
    assert all(check(a, good)[0] for a in queries["ii-01"].assertions)
    assert not all(check(a, "It is quite far.")[0] for a in queries["ii-01"].assertions)
    poem = "Grey clouds on Monday, drizzle on the glass"
    assert all(check(a, poem)[0] for a in queries["tc-01"].assertions)
    assert not check(queries["tc-01"].assertions[0], "Monday brings the rain again")[0]
    assert (
        check(queries["pf-pause-01"].assertions[0], "That makes fourteen.")[0]
        or check(queries["pf-pause-01"].assertions[0], "That makes 14.")[0]
    )
