"""The viewer's side of run comparison: ``compare_runs`` results cached per (runs, state of
their indexes), and the per-item deltas flattened into one filterable, sortable, paged table.

Only the numbers of ``compare_runs(...).to_dict()`` are shown; nothing is recomputed here."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from operator import itemgetter
from pathlib import Path
from typing import Any, NotRequired, TypedDict, Unpack
from urllib.parse import urlencode

from voxeval.errors import VoxevalError
from voxeval.report.run_compare import IMPROVEMENT, REGRESSION, compare_runs
from voxeval.store import layout

CACHE_SIZE = 8  # comparisons kept; each holds every paired item of its runs
ITEM_SORTS = (
    "system",
    "metric",
    "run",
    "item",
    "condition",
    "baseline",
    "value",
    "delta",
    "badness",
)
CHANGES = ("worse", "better", "same", "changed")
PER_PAGE = 50
# Files whose change means the comparison may differ: the index (and its write-ahead log,
# where a live run's rows land first), run.yaml and the copied suite's definition.
_STATE_FILES = (layout.INDEX_FILE, f"{layout.INDEX_FILE}-wal", layout.RUN_FILE)


def run_state(path: Path) -> tuple[float, ...]:
    """Modification times of the files a comparison of ``path`` reads (0 for a missing one)."""
    stamps = []
    for name in _STATE_FILES:
        try:
            stamps.append((path / name).stat().st_mtime)
        except OSError:
            stamps.append(0.0)
    return tuple(stamps)


class ItemRow(TypedDict):
    """One paired item of one (system, metric, later run) in the compare page's item table;
    ``baseline_url``/``run_url`` are added to the rows of the page shown."""

    system: str
    metric: str
    better: str | None  # the metric's better direction, None when it has none
    run: str
    baseline_run: str
    item: str
    condition: str
    cluster: str
    baseline: float
    value: float
    delta: float
    badness: float
    change: str
    baseline_url: NotRequired[str]
    run_url: NotRequired[str]


@dataclass(frozen=True)
class Outcome:
    """A comparison's data and its item deltas as table rows (flattened once, so paging and
    filtering a large comparison does not redo it), or the reason it was refused."""

    data: dict[str, Any] | None
    error: str | None = None
    rows: list[ItemRow] = field(default_factory=list)


class ComparisonCache:
    """``compare_runs(paths).to_dict()`` by (paths, their index mtimes): re-opening the same
    comparison is a dictionary lookup until one of the runs changes."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.size = size
        self._lock = threading.Lock()  # one computation at a time: the machine is small
        self._entries: OrderedDict[tuple[Any, ...], Outcome] = OrderedDict()
        self.computed = 0  # how many times compare_runs ran (tests check the cache with it)

    def get(self, paths: Sequence[Path]) -> Outcome:
        key = tuple((str(p), run_state(p)) for p in paths)
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
                return hit
            self.computed += 1
            try:
                data = compare_runs(list(paths)).to_dict()
                outcome = Outcome(data, rows=item_rows(data))
            except VoxevalError as exc:  # a refusal, shown to the user as it is worded
                outcome = Outcome(None, str(exc))
            self._entries[key] = outcome
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
            return outcome


def item_change(better: str | None, delta: float) -> str:
    """worse / better / same for a metric with a better direction, else changed / same."""
    if delta == 0:
        return "same"
    if better is None:
        return "changed"
    good = delta > 0 if better == "higher" else delta < 0
    return "better" if good else "worse"


def badness(better: str | None, delta: float) -> float:
    """How much worse the item got (negative: better), so "worst first" is one sort."""
    if better == "higher":
        return -delta
    if better == "lower":
        return delta
    return abs(delta)


def item_rows(data: Mapping[str, Any]) -> list[ItemRow]:
    """Every paired item of every (system, metric, later run), in the comparison's order."""
    rows: list[ItemRow] = []
    for system, entry in data["systems"].items():
        for metric, m in entry["metrics"].items():
            better = m.get("better")
            for c in m["comparisons"]:
                for item in c["items"]:
                    delta = float(item["delta"])
                    rows.append(
                        {
                            "system": system,
                            "metric": metric,
                            "better": better,
                            "run": c["run"],
                            "baseline_run": c["baseline"],
                            "item": item["item_id"],
                            "condition": item["condition"],
                            "cluster": item["cluster"],
                            "baseline": item["baseline"],
                            "value": item["value"],
                            "delta": delta,
                            "badness": badness(better, delta),
                            "change": item_change(better, delta),
                        }
                    )
    return rows


class ItemQueryChanges(TypedDict, total=False):
    """Fields of an ``ItemQuery`` to change (``params``)."""

    system: str
    metric: str
    run: str
    change: str
    q: str
    sort: str
    order: str
    page: int


@dataclass(frozen=True)
class ItemQuery:
    """The item table's filters, sort and page (empty strings: no filter)."""

    system: str = ""
    metric: str = ""
    run: str = ""
    change: str = ""
    q: str = ""  # item id contains
    sort: str = "badness"
    order: str = "desc"
    page: int = 1

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> ItemQuery:
        def text(name: str) -> str:
            return str(params.get(name) or "").strip()[:300]

        try:
            page = max(1, int(text("page") or 1))
        except ValueError:
            page = 1
        sort = text("sort") if text("sort") in ITEM_SORTS else "badness"
        return cls(
            system=text("system"),
            metric=text("metric"),
            run=text("in_run"),
            change=text("change") if text("change") in CHANGES else "",
            q=text("q"),
            sort=sort,
            order="asc" if text("order") == "asc" else "desc",
            page=page,
        )

    def params(self, runs: Sequence[str], **changes: Unpack[ItemQueryChanges]) -> str:
        """The compare page's query string for this view with ``changes``."""
        data = replace(self, **changes)
        default = ItemQuery()
        pairs: list[tuple[str, str | int]] = [("run", slug) for slug in runs]
        for f in fields(self):
            value = getattr(data, f.name)
            if value != getattr(default, f.name):
                pairs.append(("in_run" if f.name == "run" else f.name, value))
        return urlencode(pairs)

    def sorted_by(self, runs: Sequence[str], column: str) -> str:
        order = "asc" if self.sort == column and self.order == "desc" else "desc"
        return self.params(runs, sort=column, order=order, page=1)


@dataclass(frozen=True)
class ItemPage:
    rows: list[ItemRow]
    total: int
    changed_total: int
    query: ItemQuery

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // PER_PAGE))


def _matches(row: ItemRow, query: ItemQuery) -> bool:
    if query.system and row["system"] != query.system:
        return False
    if query.metric and row["metric"] != query.metric:
        return False
    if query.run and row["run"] != query.run:
        return False
    if query.change == "changed" and row["change"] == "same":
        return False
    if query.change in ("worse", "better", "same") and row["change"] != query.change:
        return False
    return not query.q or query.q.lower() in str(row["item"]).lower()


def item_page(rows: Sequence[ItemRow], query: ItemQuery) -> ItemPage:
    """The rows of ``query``'s page; ties keep the comparison's (sorted) item order."""
    filtered = any((query.system, query.metric, query.run, query.change, query.q))
    chosen = [r for r in rows if _matches(r, query)] if filtered else list(rows)
    # every sortable column holds a value in every row (numbers or text), so no None guard
    chosen.sort(key=itemgetter(query.sort), reverse=query.order == "desc")
    pages = max(1, -(-len(chosen) // PER_PAGE))
    page = min(query.page, pages)
    start = (page - 1) * PER_PAGE
    return ItemPage(
        rows=[r.copy() for r in chosen[start : start + PER_PAGE]],  # the page gets unit links
        total=len(chosen),
        changed_total=sum(r["change"] != "same" for r in chosen),
        query=replace(query, page=page),
    )


FLAG_TEXT = {REGRESSION: "▼ regression", IMPROVEMENT: "▲ improvement", "changed": "◆ changed"}
CHANGE_TEXT = {"worse": "▼ worse", "better": "▲ better", "changed": "◆ changed", "same": ""}
