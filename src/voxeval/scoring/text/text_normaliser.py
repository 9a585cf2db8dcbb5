"""Text normalisation before word error rate and text matching.

Whisper's normalisers are the reference behaviour for ASR scoring, so we use the maintained
``whisper-normalizer`` package rather than a copy of our own:

- English (``en``, ``en-US``, ``en_GB`` ...): ``EnglishTextNormalizer`` — case, punctuation,
  bracketed asides, fillers, contractions, British spellings, and numbers: spelled-out numbers,
  ordinals, decimals, currency and percentages become digits, so "1,234,567" and "one million
  two hundred thirty four thousand five hundred sixty seven" are the same token.
- Any other language: ``BasicTextNormalizer`` — case, punctuation, symbols and bracketed asides
  only; numbers are left as written because their formats differ between languages. Unicode
  marks are kept (``preserve_marks``): Whisper's default turns them into spaces, which splits
  words of scripts whose vowels are combining marks (Devanagari, Tamil ...).

A thin layer around the English normaliser repeats it until its output stops changing (it is
not idempotent on its own) and fixes what it gets wrong for our texts (tests in
tests/scoring/text/test_text_normaliser.py):

- clock times: the package turns "7:30" into "7 30" but "seven thirty" into "730", and reads
  "o'clock" as a zero; both sides now become "730" (and "7:00", "seven o'clock" become "7"),
  and "a.m."/"p.m." become "am"/"pm";
- commas between digits: the package removes them with one non-overlapping pass, so "1,2,3"
  keeps a comma; every comma between two digits is now removed;
- "ok" and "okay" (the package keeps both) are one word.

What it does not make equal (documented in docs/single-turn.md): prices read without the
currency word ("three fifty" vs "$3.50"), "three dollars fifty", "a million" vs "1,000,000",
fractions ("3/4" vs "three quarters"), numbers grouped with spaces or dots ("1 000 000",
"1.000.000"), unit abbreviations ("km" vs "kilometers") and lists of digits spoken one by one
("1, 2, 3" vs "one, two, three": Whisper reads consecutive digit words as one number).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from whisper_normalizer.basic import BasicTextNormalizer
from whisper_normalizer.english import EnglishTextNormalizer

Normaliser = Callable[[str], str]

_CLOCK_ON_THE_HOUR = re.compile(r"\b(\d{1,2}):00\b")
_CLOCK = re.compile(r"\b(\d{1,2}):([0-5]\d)\b")
_OCLOCK = re.compile(r"\bo\s?['’]?\s?clock\b")
_MERIDIEM = re.compile(r"\b([ap])\.\s?m\.")
_DIGIT_COMMA = re.compile(r"(?<=\d),(?=\d)")
_SAME_WORD = {"ok": "okay"}
_MAX_PASSES = 8


@functools.cache
def _whisper_english() -> EnglishTextNormalizer:
    return EnglishTextNormalizer()  # reads its spelling table once


@functools.cache
def _whisper_basic() -> BasicTextNormalizer:
    return BasicTextNormalizer(preserve_marks=True)


def _english_pass(text: str) -> str:
    s = text.lower()
    s = _CLOCK_ON_THE_HOUR.sub(r"\1", s)
    s = _CLOCK.sub(r"\1\2", s)
    s = _OCLOCK.sub(" ", s)
    s = _MERIDIEM.sub(r"\1m", s)
    s = _DIGIT_COMMA.sub("", s)
    words = _whisper_english()(s).split()
    return " ".join(_SAME_WORD.get(w, w) for w in words)


@functools.lru_cache(maxsize=8192)
def normalise_english(text: str) -> str:
    """Lower-case words separated by single spaces, ready for jiwer (Whisper's English rules
    plus the fixes listed in the module docstring).

    Whisper's normaliser is not idempotent: its output can normalise further ("minus five"
    -> "-5" -> "5", "twelve 1" -> "12 one" -> "121"), so the same words reached by two routes
    could differ. We repeat it until the text stops changing, which makes the result a fixed
    point; real text settles in two or three passes."""
    current = _english_pass(text)
    for _ in range(_MAX_PASSES):
        following = _english_pass(current)
        if following == current:
            break
        current = following
    return current


@functools.lru_cache(maxsize=8192)
def _normalise_basic(text: str) -> str:
    return " ".join(_whisper_basic()(text).split())


def is_english(language: str | None) -> bool:
    """Whether a language tag (``en``, ``en-US``, ``en_GB``; None counts as English, the
    default of every record) names English."""
    return language is None or re.split(r"[-_]", language.strip().lower())[0] in ("en", "eng")


def normaliser_for(language: str | None) -> Normaliser:
    """The normaliser to use for text in ``language``: Whisper's English one for English,
    Whisper's basic one otherwise."""
    return normalise_english if is_english(language) else _normalise_basic
