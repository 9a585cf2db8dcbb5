"""Deterministic curation steps for real user queries (no LLM): reading candidates, toxicity
flag, single-turn, English, length, one latest query per user, exact and near duplicates."""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rapidfuzz import fuzz, process

from voxeval.benchmarks.jsonl_file import read_jsonl
from voxeval.errors import ConfigError
from voxeval.json_types import JSONReadValue

MAX_WORDS = 50  # WildSpeech keeps queries with fewer than 50 words
NEAR_DUPLICATE_RATIO = 90.0

TEXT_FIELDS = ("text", "query", "user_query", "content", "prompt")
USER_FIELDS = ("user", "user_id", "hashed_ip", "author")
TIME_FIELDS = ("timestamp", "time", "created_at", "date")

_EN_WORDS = (
    "the a an and or but is are was were be been do does did have has had i you he she it we",
    "they my your his her its our their me him us them this that these those what which who",
    "how why when where can could would should will shall may might must to of in on at for",
    "with about from by as if not no so than then there here all any some more most very just",
    "please tell give make write explain",
)
# Frequent function words of other languages in chat logs; used only to outvote English hits.
_OTHER_WORDS = (
    "el la los las de que y en un una por para con es del se lo como pero",  # es
    "le les des et est une pour dans qui pas sur avec ce sont",  # fr
    "der die das und ist nicht ein eine zu mit den von ich sie wie auch",  # de
    "il che di non sono per una della gli",  # it
    "o os as um uma não com para por mais",  # pt
    "и в не на что я с он как",  # ru
)
_EN_STOPWORDS = frozenset(" ".join(_EN_WORDS).split())
_OTHER_STOPWORDS = frozenset(" ".join(_OTHER_WORDS).split())
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?", re.UNICODE)


@dataclass
class Candidate:
    """One user query under curation."""

    id: str
    text: str
    user: str | None = None
    time: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)
    ratings: list[dict[str, Any]] = field(default_factory=list)
    category: str | None = None
    subcategory: str | None = None


def _first(row: Mapping[str, JSONReadValue], names: tuple[str, ...]) -> JSONReadValue:
    for name in names:
        if row.get(name) not in (None, ""):
            return row[name]
    return None


def _user_turns(row: Mapping[str, JSONReadValue]) -> list[str] | None:
    conversation = row.get("conversation") or row.get("messages")
    if isinstance(conversation, list):
        return [
            str(m.get("content", ""))
            for m in conversation
            if isinstance(m, dict) and m.get("role") == "user"
        ]
    return None


def read_candidates(path: Path) -> list[Candidate]:
    """Rows of a JSONL file; text comes from the first of ``TEXT_FIELDS`` or the (last) user
    message of a ``conversation``/``messages`` list."""
    candidates = []
    for index, row in enumerate(read_jsonl(path)):
        if not isinstance(row, dict):
            raise ConfigError(f"{path}: line {index + 1}: expected a JSON object")
        text = _first(row, TEXT_FIELDS)
        turns = _user_turns(row)
        if text is None and turns:
            text = turns[-1]
        if text is None:
            raise ConfigError(
                f"{path}: line {index + 1}: no query text (fields {', '.join(TEXT_FIELDS)} "
                "or a conversation)"
            )
        user = _first(row, USER_FIELDS)
        when = _first(row, TIME_FIELDS)
        ident = str(row.get("id", f"q{index + 1:06d}"))
        candidates.append(
            Candidate(
                ident,
                str(text).strip(),
                None if user is None else str(user),
                None if when is None else str(when),
                row,
            )
        )
    return candidates


def is_toxic(c: Candidate) -> bool | None:
    """The row's own toxicity flag (``toxic`` / ``is_toxic``); None when it has none."""
    for name in ("toxic", "is_toxic"):
        if name in c.raw:
            return bool(c.raw[name])
    return None


def is_single_turn(c: Candidate) -> bool:
    turns = _user_turns(c.raw)
    if turns is not None:
        return len(turns) <= 1
    for name in ("turn", "turns", "num_turns"):
        value = c.raw.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value <= 1
    return True


def english_detector() -> tuple[str, Callable[[str], bool]]:
    """The best available language detector: ``langid``, ``langdetect``, else our heuristic."""
    try:
        import langid

        return "langid", lambda text: langid.classify(text)[0] == "en"
    except ImportError:
        pass
    try:
        from langdetect import DetectorFactory, detect

        DetectorFactory.seed = 0

        def _detect(text: str) -> bool:
            try:
                return bool(detect(text) == "en")
            except Exception:  # langdetect raises on text without features
                return looks_english(text)

        return "langdetect", _detect
    except ImportError:
        return "heuristic (ascii letters + stopwords)", looks_english


def looks_english(text: str) -> bool:
    """Offline heuristic: mostly ASCII letters, and English function words are not
    outnumbered by other languages' function words."""
    letters = [ch for ch in text if ch.isalpha()]
    if not letters:
        return False
    ascii_share = sum(ch.isascii() for ch in letters) / len(letters)
    if ascii_share < 0.9:
        return False
    words = [w.lower() for w in _WORD.findall(unicodedata.normalize("NFC", text))]
    english = sum(w in _EN_STOPWORDS for w in words)
    other = sum(w in _OTHER_STOPWORDS and w not in _EN_STOPWORDS for w in words)
    if len(words) <= 3:
        return other == 0
    return english > 0 and english >= other


def word_count(text: str) -> int:
    return len(text.split())


def latest_per_user(candidates: list[Candidate]) -> list[Candidate]:
    """Keep each user's latest query (by time field, else file order); rows without a user
    field are all kept."""
    latest: dict[str, tuple[str, int]] = {}
    for index, c in enumerate(candidates):
        if c.user is None:
            continue
        stamp = (c.time or "", index)
        if c.user not in latest or stamp >= latest[c.user]:
            latest[c.user] = stamp
    keep = {v[1] for v in latest.values()}
    return [c for i, c in enumerate(candidates) if c.user is None or i in keep]


def normalise_text(text: str) -> str:
    lowered = unicodedata.normalize("NFKC", text).lower()
    return " ".join(re.sub(r"[^\w\s]", " ", lowered).split())


def dedupe_exact(candidates: list[Candidate]) -> list[Candidate]:
    seen: set[str] = set()
    out = []
    for c in candidates:
        key = normalise_text(c.text)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def dedupe_near(
    candidates: list[Candidate], threshold: float = NEAR_DUPLICATE_RATIO
) -> list[Candidate]:
    """Drop queries whose normalised text reaches ``threshold`` (rapidfuzz ratio) against an
    earlier kept one. Comparisons are blocked by first word to stay fast on large logs."""
    blocks: dict[str, list[str]] = defaultdict(list)
    out = []
    for c in candidates:
        norm = normalise_text(c.text)
        block = blocks[norm.split(" ", 1)[0] if norm else ""]
        if block and process.extractOne(norm, block, scorer=fuzz.ratio, score_cutoff=threshold):
            continue
        block.append(norm)
        out.append(c)
    return out
