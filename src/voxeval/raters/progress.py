"""What the admin dashboard and the serve command's progress line show: answers per item
against their target, and per rater their answers, gold accuracy and time per answer."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from sqlalchemy import Engine, select

from voxeval.raters.database import transaction
from voxeval.raters.schema import accounts_table, items_table, responses_table


@dataclass(frozen=True)
class ItemProgress:
    item_id: str
    kind: str
    done: int
    target: int


@dataclass(frozen=True)
class RaterProgress:
    rater_id: str
    role: str
    label: str | None
    trained: bool
    answers: int
    gold_answered: int
    gold_correct: int
    median_seconds: float | None

    @property
    def gold_accuracy(self) -> float | None:
        return self.gold_correct / self.gold_answered if self.gold_answered else None


@dataclass(frozen=True)
class StudyProgress:
    items: list[ItemProgress]
    raters: list[RaterProgress]

    @property
    def answers(self) -> int:
        return sum(r.answers for r in self.raters)

    @property
    def normal_items(self) -> list[ItemProgress]:
        return [i for i in self.items if i.kind == "normal" and i.target > 0]

    @property
    def complete_items(self) -> int:
        return sum(1 for i in self.normal_items if i.done >= i.target)

    @property
    def answers_needed(self) -> int:
        return sum(i.target for i in self.normal_items)

    @property
    def answers_towards_target(self) -> int:
        return sum(min(i.done, i.target) for i in self.normal_items)

    def summary(self) -> str:
        active = sum(1 for r in self.raters if r.answers)
        return (
            f"{self.answers} answer(s) from {active} rater(s); "
            f"{self.complete_items}/{len(self.normal_items)} item(s) at target; "
            f"{self.answers_towards_target}/{self.answers_needed} target answers"
        )


def study_progress(engine: Engine, study_id: str) -> StudyProgress:
    with transaction(engine) as conn:
        items = conn.execute(
            select(items_table.c.item_id, items_table.c.kind, items_table.c.target_raters)
            .where(items_table.c.study_id == study_id)
            .order_by(items_table.c.item_id)
        ).all()
        accounts = conn.execute(
            select(accounts_table)
            .where(accounts_table.c.study_id == study_id)
            .order_by(accounts_table.c.created_at, accounts_table.c.rater_id)
        ).all()
        responses = conn.execute(
            select(
                responses_table.c.item_id,
                responses_table.c.rater_id,
                responses_table.c.seconds_on_page,
                responses_table.c.gold_correct,
            ).where(responses_table.c.study_id == study_id)
        ).all()
    per_item: dict[str, int] = {}
    per_rater: dict[str, list[float]] = {}
    gold: dict[str, list[bool]] = {}
    for r in responses:
        per_item[r.item_id] = per_item.get(r.item_id, 0) + 1
        per_rater.setdefault(r.rater_id, []).append(float(r.seconds_on_page))
        if r.gold_correct is not None:
            gold.setdefault(r.rater_id, []).append(bool(r.gold_correct))
    return StudyProgress(
        items=[
            ItemProgress(i.item_id, i.kind, per_item.get(i.item_id, 0), int(i.target_raters))
            for i in items
        ],
        raters=[
            RaterProgress(
                rater_id=a.rater_id,
                role=a.role,
                label=a.label,
                trained=a.trained_at is not None,
                answers=len(per_rater.get(a.rater_id, [])),
                gold_answered=len(gold.get(a.rater_id, [])),
                gold_correct=sum(gold.get(a.rater_id, [])),
                median_seconds=statistics.median(per_rater[a.rater_id])
                if per_rater.get(a.rater_id)
                else None,
            )
            for a in accounts
        ],
    )
