"""Human-score validation: read human 1-10 ratings of a run's replies (CSV or JSONL, keyed by
item id and, when the run has several systems, system) and correlate them with the judge's
checklist scores, overall and per category.

A rating is matched to the checklist score of the same item and system, averaged over
trials; intervals resample whole queries (see ``voxeval.analysis.agreement.agreement``)."""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voxeval.analysis.agreement.agreement import correlation_stats
from voxeval.errors import ConfigError
from voxeval.json_types import JSONReadObject
from voxeval.report.json_fields import as_float, as_int
from voxeval.store.records import ScoreRow

HUMAN_MIN, HUMAN_MAX = 1.0, 10.0


@dataclass(frozen=True)
class HumanScore:
    item_id: str
    system: str | None
    score: float
    line: int


def _parse_record(path: Path, line: int, record: JSONReadObject) -> HumanScore:
    where = f"{path}: line {line}"
    item = record.get("item_id")
    if not isinstance(item, str) or not item.strip():
        raise ConfigError(f"{where}: field item_id: missing or empty")
    raw = record.get("score")
    try:
        score = as_float(raw)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: field score: {raw!r} is not a number") from None
    if not HUMAN_MIN <= score <= HUMAN_MAX:
        raise ConfigError(f"{where}: field score: {score:g} is outside 1-10")
    system = record.get("system")
    system = str(system).strip() if system not in (None, "") else None
    return HumanScore(item.strip(), system, score, line)


def read_human_scores(path: Path) -> list[HumanScore]:
    """Ratings from a ``.csv`` (header with ``item_id``, ``score`` and optional ``system``)
    or ``.jsonl`` file (one object per line with the same fields)."""
    if not path.is_file():
        raise ConfigError(f"{path}: no such file")
    text = path.read_text(encoding="utf-8")
    out = []
    if path.suffix.lower() == ".csv":
        reader = csv.DictReader(text.splitlines())
        missing = {"item_id", "score"} - set(reader.fieldnames or ())
        if missing:
            raise ConfigError(f"{path}: line 1: header lacks {', '.join(sorted(missing))}")
        for number, record in enumerate(reader, 2):
            out.append(_parse_record(path, number, record))
    elif path.suffix.lower() in (".jsonl", ".json"):
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{path}: line {number}: invalid JSON ({exc.msg})") from None
            if not isinstance(record, dict):
                raise ConfigError(f"{path}: line {number}: expected an object")
            out.append(_parse_record(path, number, record))
    else:
        raise ConfigError(f"{path}: expected a .csv or .jsonl file")
    if not out:
        raise ConfigError(f"{path}: no ratings")
    return out


def human_validation(
    path: Path,
    ratings: Sequence[HumanScore],
    rows: Sequence[ScoreRow],
    query_ids: Mapping[str, str],
    *,
    seed: int = 0,
) -> dict[str, Any]:
    """Pearson and Spearman of human ratings against checklist scores, overall and per
    category. A rating of an item or system the run has no checklist score for is an error
    naming its line; a rating without system is accepted only in a one-system run."""
    judged: dict[tuple[str, str], list[float]] = defaultdict(list)
    categories: dict[str, str] = {}
    for row in rows:
        if row.metric == "checklist" and row.ran:
            judged[(row.item_id, row.system)].append(float(row.value))  # type: ignore[arg-type]
            categories[row.item_id] = row.category
    if not judged:
        raise ConfigError(_no_checklist_scores(rows))
    systems = sorted({s for _, s in judged})
    pairs: dict[str, list[tuple[float, float, str]]] = defaultdict(list)
    for rating in ratings:
        where = f"{path}: line {rating.line}"
        system = rating.system
        if system is None:
            if len(systems) != 1:
                raise ConfigError(
                    f"{where}: field system: needed, the run has systems {', '.join(systems)}"
                )
            system = systems[0]
        scores = judged.get((rating.item_id, system))
        if not scores:
            raise ConfigError(
                f"{where}: field item_id: {rating.item_id!r} has no checklist score "
                f"for system {system!r} in this run"
            )
        query = query_ids.get(rating.item_id, rating.item_id)
        entry = (rating.score, sum(scores) / len(scores), query)
        pairs["overall"].append(entry)
        pairs[categories[rating.item_id]].append(entry)
    out: dict[str, Any] = {"file": str(path), "ratings": len(ratings), "unit": "query"}
    for group in ["overall", *sorted(k for k in pairs if k != "overall")]:
        human, judge, queries = zip(*pairs[group], strict=True)
        out.setdefault("by_category" if group != "overall" else "overall", {})
        stat = correlation_stats(human, judge, clusters=queries, seed=seed)
        note = interval_note(stat, human, judge)
        if note:
            stat["note"] = note
        if group == "overall":
            out["overall"] = stat
        else:
            out["by_category"][group] = stat
    return out


# correlation_stats gives no interval below this many independent queries.
MIN_QUERIES_FOR_INTERVAL = 3


def interval_note(stat: JSONReadObject, human: Sequence[float], judge: Sequence[float]) -> str:
    """Why a group has no correlation or no interval ("" when it has both)."""
    if len(set(human)) < 2 or len(set(judge)) < 2:
        which = "human ratings" if len(set(human)) < 2 else "checklist scores"
        return f"no correlation: the {which} of this group are all equal"
    if as_int(stat["clusters"]) < MIN_QUERIES_FOR_INTERVAL:
        return (
            f"no interval: {stat['clusters']} queries, an interval needs at least "
            f"{MIN_QUERIES_FOR_INTERVAL} (the resampled unit is the query)"
        )
    return ""


def _no_checklist_scores(rows: Sequence[ScoreRow]) -> str:
    """Why the run has nothing to compare human ratings with, and how to get it."""
    checklist = [r for r in rows if r.metric == "checklist"]
    how = (
        "human ratings are compared with the checklist judge's scores; give the run a judge "
        "(a YAML with `judge: {provider: openai, base_url: ..., model: ...}`) and score it: "
        "`voxeval score RUN --metrics checklist --config judge.yaml`"
    )
    if not checklist:
        return f"the run has no checklist scores: {how}"
    pending = sum(1 for r in checklist if r.pending)
    reasons = sorted({r.error or "" for r in checklist if not r.pending} - {""})
    why = f"{pending} pending" if pending else ""
    if reasons:
        why = "; ".join(x for x in (why, f"not run: {reasons[0]}") if x)
    return f"the run has no checklist scores ({len(checklist)} checklist rows, {why}): {how}"
