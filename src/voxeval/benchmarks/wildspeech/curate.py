"""Curate real user queries into a single-turn spoken suite (WildSpeech recipe).

Steps, each reported with how many queries it kept: toxicity flag, single-turn, English,
fewer than 50 words, one latest query per user, exact and near duplicates, two LLM raters
(commonality 1-5, difficulty 1-10; keep when both raters give difficulty >= 5 and
commonality >= 3), LLM category labelling (II/SR/OE/TC/PF), and rebalancing to a per-category
cap. Without a judge endpoint the LLM steps are reported as not run.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import numpy as np

from voxeval.benchmarks.wildspeech.curate_filters import (
    MAX_WORDS,
    Candidate,
    dedupe_exact,
    dedupe_near,
    english_detector,
    is_single_turn,
    is_toxic,
    latest_per_user,
    read_candidates,
    word_count,
)
from voxeval.benchmarks.wildspeech.spoken_query import CATEGORY_NAMES, PF_SUBCATEGORIES
from voxeval.errors import EndpointError, VoxevalError
from voxeval.providers.base import LLM

MIN_DIFFICULTY = 5
MIN_COMMONALITY = 3

RATING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "commonality": {"type": "integer", "minimum": 1, "maximum": 5},
        "difficulty": {"type": "integer", "minimum": 1, "maximum": 10},
    },
    "required": ["commonality", "difficulty"],
}
LABEL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "category": {"type": "string", "enum": list(CATEGORY_NAMES)},
        "subcategory": {"type": ["string", "null"], "enum": [*PF_SUBCATEGORIES, None]},
    },
    "required": ["category"],
}

RATER_PROMPTS: tuple[str, str] = (
    "You screen questions that people might ask a voice assistant out loud. For the query "
    "below give two ratings.\n"
    "commonality (1-5): how often ordinary people would plausibly ask something like this "
    "by voice; 1 = almost never, 5 = very often.\n"
    "difficulty (1-10): how much knowledge, reasoning or care a strong answer needs; "
    "1 = trivial lookup or chit-chat, 10 = expert-level, multi-step work.\n"
    'Answer with JSON only: {{"commonality": N, "difficulty": N}}.\n\nQuery: {query}',
    "Act as a benchmark designer choosing test questions for spoken assistants. Judge the "
    "query on its own, not on how it is phrased.\n"
    "Rate commonality from 1 (a rare, niche request) to 5 (an everyday request many users "
    "make), and difficulty from 1 (anyone could answer it instantly) to 10 (it demands deep "
    "expertise or long careful reasoning).\n"
    "Reply with a JSON object with integer fields commonality and difficulty.\n\n"
    "Query: {query}",
)
LABEL_PROMPT = (
    "Assign the spoken user query below to one category:\n"
    "II = information inquiry (asks for facts or explanations)\n"
    "SR = solution request (asks how to fix or achieve something)\n"
    "OE = opinion exchange (asks for a view, advice on a choice, or discussion)\n"
    "TC = text creation (asks to write, draft or compose something)\n"
    "PF = paralinguistic: the meaning depends on how it is spoken; then also give subcategory "
    "pause, stress, tone, stutter or near-homophone.\n"
    'Reply with JSON: {{"category": "...", "subcategory": null or "..."}}.\n\nQuery: {query}'
)


class StepRow(TypedDict):
    """One line of the curation table."""

    step: str
    kept: int
    dropped: int
    ran: bool
    note: str


@dataclass
class CurationStep:
    name: str
    kept: int
    dropped: int
    note: str = ""
    ran: bool = True


@dataclass
class CurationReport:
    steps: list[CurationStep] = field(default_factory=list)
    kept: list[Candidate] = field(default_factory=list)
    language_detector: str = ""
    llm_calls: int = 0
    llm_failures: int = 0
    # (step, query id, error) of every rater call that failed: not a filter decision
    failed_calls: list[tuple[str, str, str]] = field(default_factory=list)
    # the rater endpoint could not be reached at all: the LLM steps stopped there
    unreachable: str | None = None

    def call_failed(self, step: str, candidate: Candidate, exc: VoxevalError) -> None:
        self.llm_failures += 1
        self.failed_calls.append((step, candidate.id, str(exc)))
        if isinstance(exc, EndpointError) and exc.failure == "connection":
            self.unreachable = str(exc)

    def add(self, name: str, before: int, after: list[Candidate], note: str = "") -> None:
        failed = sum(1 for step, _, _ in self.failed_calls if step == name)
        if failed:  # queries whose call failed were not filtered out by the step's rule
            note = "; ".join(x for x in (note, f"{failed} failed calls, not judged") if x)
        self.steps.append(CurationStep(name, len(after), before - len(after) - failed, note))

    def skip(self, name: str, count: int, reason: str) -> None:
        self.steps.append(CurationStep(name, count, 0, reason, ran=False))

    def table(self) -> list[StepRow]:
        return [
            {"step": s.name, "kept": s.kept, "dropped": s.dropped, "ran": s.ran, "note": s.note}
            for s in self.steps
        ]


def _rate(llm: LLM, prompt: str, query: str, seed: int) -> dict[str, Any]:
    response = llm.chat(
        [{"role": "user", "content": prompt.format(query=query)}],
        response_schema=RATING_SCHEMA,
        temperature=0.0,
        seed=seed,
    )
    return dict(response.parsed)


RATING_STEP = "two LLM raters (difficulty >= 5, commonality >= 3)"
LABEL_STEP = "category labelling"


def rate_and_filter(
    candidates: list[Candidate], raters: list[LLM], report: CurationReport
) -> list[Candidate]:
    """Two ratings per query (two endpoints, or one endpoint with two prompts and seeds).
    An unreachable endpoint stops the step (every further call would fail the same way)."""
    pairs = [(raters[i % len(raters)], RATER_PROMPTS[i], 1000 + i) for i in range(2)]
    kept = []
    for c in candidates:
        if report.unreachable:
            break
        try:
            c.ratings = [_rate(llm, prompt, c.text, seed) for llm, prompt, seed in pairs]
            report.llm_calls += 2
        except VoxevalError as exc:
            report.call_failed(RATING_STEP, c, exc)
            c.raw["_rating_error"] = str(exc)
            continue
        if all(
            r["difficulty"] >= MIN_DIFFICULTY and r["commonality"] >= MIN_COMMONALITY
            for r in c.ratings
        ):
            kept.append(c)
    return kept


def label_categories(
    candidates: list[Candidate], llm: LLM, report: CurationReport
) -> list[Candidate]:
    kept = []
    for c in candidates:
        if report.unreachable:
            break
        try:
            parsed = llm.chat(
                [{"role": "user", "content": LABEL_PROMPT.format(query=c.text)}],
                response_schema=LABEL_SCHEMA,
                temperature=0.0,
            ).parsed
            report.llm_calls += 1
        except VoxevalError as exc:
            report.call_failed(LABEL_STEP, c, exc)
            continue
        c.category = parsed["category"]
        c.subcategory = parsed.get("subcategory") if c.category == "PF" else None
        if c.category == "PF" and c.subcategory not in PF_SUBCATEGORIES:
            continue  # a PF label without its phenomenon cannot be rendered or reported
        kept.append(c)
    return kept


def rebalance(candidates: list[Candidate], per_category: int, seed: int) -> list[Candidate]:
    """At most ``per_category`` queries per category, sampled with ``seed`` (order kept)."""
    rng = np.random.default_rng(seed)
    chosen: set[int] = set()
    for category in CATEGORY_NAMES:
        members = [i for i, c in enumerate(candidates) if c.category == category]
        if len(members) > per_category:
            members = sorted(rng.choice(members, size=per_category, replace=False).tolist())
        chosen.update(members)
    return [c for i, c in enumerate(candidates) if i in chosen]


def curate(
    path: str | Path,
    raters: list[LLM] | None = None,
    *,
    per_category: int | None = None,
    seed: int = 0,
) -> CurationReport:
    """Run every step on the JSONL at ``path``; ``raters`` = one or two LLMs (None: skip the
    LLM steps)."""
    report = CurationReport()
    items = read_candidates(Path(path))
    report.steps.append(CurationStep("loaded", len(items), 0))
    flags = [is_toxic(c) for c in items]
    if any(f is not None for f in flags):
        before, items = len(items), [c for c, f in zip(items, flags, strict=True) if not f]
        report.add("non-toxic (row flag)", before, items)
    else:
        report.skip("non-toxic (row flag)", len(items), "rows carry no toxic/is_toxic field")
    before, items = len(items), [c for c in items if is_single_turn(c)]
    report.add("single-turn", before, items)
    name, is_english = english_detector()
    report.language_detector = name
    before, items = len(items), [c for c in items if is_english(c.text)]
    report.add("English", before, items, f"detector: {name}")
    before, items = len(items), [c for c in items if word_count(c.text) < MAX_WORDS]
    report.add(f"fewer than {MAX_WORDS} words", before, items)
    before, items = len(items), latest_per_user(items)
    report.add("latest query per user", before, items)
    before, items = len(items), dedupe_exact(items)
    report.add("exact duplicates removed", before, items)
    before, items = len(items), dedupe_near(items)
    report.add("near duplicates removed", before, items, "rapidfuzz ratio >= 90")
    if not raters:
        reason = "no judge endpoint configured (--judge-config)"
        report.skip("two LLM raters (difficulty >= 5, commonality >= 3)", len(items), reason)
        report.skip("category labelling", len(items), reason)
        report.skip("rebalancing", len(items), reason)
        report.kept = items
        return report
    before, items = len(items), rate_and_filter(items, raters, report)
    if report.unreachable:
        return _stopped(report, before, f"the rater endpoint is unreachable: {report.unreachable}")
    report.add(RATING_STEP, before, items)
    before, items = len(items), label_categories(items, raters[0], report)
    if report.unreachable:
        return _stopped(report, before, f"the rater endpoint is unreachable: {report.unreachable}")
    report.add(LABEL_STEP, before, items)
    if per_category:
        before, items = len(items), rebalance(items, per_category, seed)
        report.add(f"rebalancing (<= {per_category} per category)", before, items)
    else:
        report.skip("rebalancing", len(items), "no --per-category cap given")
    report.kept = items
    return report


def _stopped(report: CurationReport, count: int, reason: str) -> CurationReport:
    """The report of a curation whose LLM steps could not go on: nothing is kept (no query
    was rated), the remaining steps are listed as not run with ``reason``."""
    done = {s.name for s in report.steps}
    for name in (RATING_STEP, LABEL_STEP, "rebalancing"):
        if name not in done:
            report.skip(name, count, reason)
    report.kept = []
    return report


def candidate_row(c: Candidate) -> dict[str, Any]:
    """A suite row (``SpokenQuery`` fields) when labelled, else a plain candidate row."""
    metadata: dict[str, Any] = {"ratings": c.ratings, "source_id": c.id}
    if c.user is not None:
        metadata["user"] = c.user
    ident = re.sub(r"[^A-Za-z0-9_.\-]", "-", c.id).lstrip("-_.") or "q"
    row: dict[str, Any] = {"id": ident, "text": c.text}
    if c.category:
        row["category"] = c.category
        if c.subcategory:
            row["subcategory"] = c.subcategory
    row["metadata"] = metadata
    return row


def write_curated(report: CurationReport, out: str | Path) -> Path:
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(json.dumps(candidate_row(c)) + "\n" for c in report.kept), encoding="utf-8"
    )
    return path
