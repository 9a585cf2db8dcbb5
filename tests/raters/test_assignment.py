"""Assignment: least-loaded first up to the target, gold after every N answers, seeded
per-rater order and side swaps, stale assignments expiring, never an item twice."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select, update

from tests.raters.study_builder import make_study
from voxeval.raters.assignment import next_item, presentation_key, swap_sides
from voxeval.raters.database import database_url, open_database, sync_study, utcnow
from voxeval.raters.schema import assignments_table, responses_table
from voxeval.raters.study.study_files import load_study_config, load_study_items


def _setup(tmp_path: Path, **settings: Any) -> tuple[Any, Any]:
    study = make_study(tmp_path / "s", "arena", **settings)
    config = load_study_config(study)
    engine = open_database(database_url(study, None))
    sync_study(engine, study, config, load_study_items(study, config))
    return engine, config


def _answer(engine: Any, config: Any, rater: str, assignment_id: int) -> str:
    with engine.begin() as conn:
        row = conn.execute(
            select(assignments_table).where(assignments_table.c.assignment_id == assignment_id)
        ).one()
        conn.execute(
            insert(responses_table).values(
                study_id=config.study_id, item_id=row.item_id, rater_id=rater,
                assignment_id=assignment_id, task="arena", answer={"choice": "tie"},
                seconds_on_page=1.0, submitted_at=utcnow(),
            )
        )  # fmt: skip
        conn.execute(
            update(assignments_table)
            .where(assignments_table.c.assignment_id == assignment_id)
            .values(status="done")
        )
    return str(row.item_id)


def _item_of(engine: Any, assignment_id: int) -> str:
    with engine.connect() as conn:
        return str(
            conn.execute(
                select(assignments_table.c.item_id).where(
                    assignments_table.c.assignment_id == assignment_id
                )
            ).scalar_one()
        )


def test_concurrent_raters_spread_over_items_and_stop_at_target(tmp_path: Path) -> None:
    engine, config = _setup(tmp_path, items=3, raters_per_item=2)
    # six raters arrive together: open assignments count, so each item gets exactly two
    held = [next_item(engine, config, f"r{i}") for i in range(6)]
    items = [_item_of(engine, h.assignment_id) for h in held]  # type: ignore[arg-type]
    assert sorted(items) == ["item-0", "item-0", "item-1", "item-1", "item-2", "item-2"]
    # a seventh finds every slot held by someone else: waiting, not finished
    assert next_item(engine, config, "r6").outcome == "waiting"
    for i, h in enumerate(held):
        _answer(engine, config, f"r{i}", h.assignment_id)  # type: ignore[arg-type]
    assert next_item(engine, config, "r6").outcome == "finished"


def test_a_rater_never_gets_an_item_twice_and_resumes_the_open_one(tmp_path: Path) -> None:
    engine, config = _setup(tmp_path, items=3, raters_per_item=5)
    first = next_item(engine, config, "r0")
    assert next_item(engine, config, "r0") == first  # a reload resumes, no new assignment
    seen = [_answer(engine, config, "r0", first.assignment_id)]  # type: ignore[arg-type]
    while (nxt := next_item(engine, config, "r0")).assignment_id is not None:
        seen.append(_answer(engine, config, "r0", nxt.assignment_id))
    assert sorted(seen) == ["item-0", "item-1", "item-2"]
    assert next_item(engine, config, "r0").outcome == "finished"


def test_stale_open_assignments_expire_and_free_their_slot(tmp_path: Path) -> None:
    engine, config = _setup(tmp_path, items=1, raters_per_item=1)
    held = next_item(engine, config, "r0")
    assert next_item(engine, config, "r1").outcome == "waiting"
    later = utcnow() + timedelta(minutes=30)
    freed = next_item(engine, config, "r1", now=later, ttl=timedelta(minutes=20))
    assert freed.outcome == "assigned"
    with engine.connect() as conn:
        status = conn.execute(
            select(assignments_table.c.status).where(
                assignments_table.c.assignment_id == held.assignment_id
            )
        ).scalar_one()
    assert status == "expired"


def test_gold_item_after_every_n_answers(tmp_path: Path) -> None:
    engine, config = _setup(tmp_path, items=6, gold=2, raters_per_item=3, gold_every=2)
    order = []
    for _ in range(8):
        nxt = next_item(engine, config, "r0")
        order.append(_answer(engine, config, "r0", nxt.assignment_id))  # type: ignore[arg-type]
    kinds = ["gold" if i.startswith("gold") else "normal" for i in order]
    assert kinds == ["normal", "normal", "gold", "normal", "normal", "gold", "normal", "normal"]


def test_order_and_sides_are_seeded_per_rater(tmp_path: Path) -> None:
    engine, config = _setup(tmp_path, items=8, raters_per_item=8)
    orders = {}
    for rater in ("r0", "r1"):
        sequence = []
        while (nxt := next_item(engine, config, rater)).assignment_id is not None:
            sequence.append(_answer(engine, config, rater, nxt.assignment_id))
        orders[rater] = sequence
    assert orders["r0"] != orders["r1"]  # different raters, different orders
    again, config2 = _setup(tmp_path / "again", items=8, raters_per_item=8)
    replay = []
    while (nxt := next_item(again, config2, "r0")).assignment_id is not None:
        replay.append(_answer(again, config2, "r0", nxt.assignment_id))
    assert replay == orders["r0"]  # same seed, same order
    swaps = {swap_sides(config.seed, f"r{i}", "item-0") for i in range(20)}
    assert swaps == {True, False}
    assert swap_sides(0, "r1", "item-0") == swap_sides(0, "r1", "item-0")
    ranks = {
        seed: sorted(range(8), key=lambda i: presentation_key(seed, "r1", f"item-{i}"))
        for seed in (0, 1)
    }
    assert ranks[0] != ranks[1]  # the study seed enters the order


def _race(engine: Any, config: Any, raters: int) -> list[Any]:
    import threading

    errors: list[BaseException] = []

    def work(rater: str) -> None:
        try:
            # two "tabs" of the same rater ask at once as well
            while (nxt := next_item(engine, config, rater)).assignment_id is not None:
                next_item(engine, config, rater)
                _answer(engine, config, rater, nxt.assignment_id)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(f"r{i}",)) for i in range(raters)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    with engine.connect() as conn:
        return list(conn.execute(select(responses_table.c.item_id, responses_table.c.rater_id)))


def test_concurrent_raters_on_sqlite_reach_the_target_without_duplicates(tmp_path: Path) -> None:
    engine, config = _setup(tmp_path, items=5, raters_per_item=3)
    rows = _race(engine, config, raters=6)
    assert len(rows) == len(set(rows))
    counts = {i: sum(1 for r in rows if r.item_id == i) for i in {r.item_id for r in rows}}
    assert counts == {f"item-{i}": 3 for i in range(5)}  # every item at its target, no more


def test_concurrent_raters_on_postgres(tmp_path: Path, postgres_url: str) -> None:
    study = make_study(tmp_path / "s", "arena", items=5, raters_per_item=3)
    config = load_study_config(study)
    engine = open_database(postgres_url)
    sync_study(engine, study, config, load_study_items(study, config))
    rows = _race(engine, config, raters=6)
    assert len(rows) == len(set(rows))
    counts = {i: sum(1 for r in rows if r.item_id == i) for i in {r.item_id for r in rows}}
    assert counts == {f"item-{i}": 3 for i in range(5)}
    engine.dispose()
