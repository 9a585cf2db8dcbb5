"""English text normalisation before word error rate, in the spirit of Whisper's normaliser:
case, punctuation, bracketed asides, fillers, contractions, British spellings of common words
and spelled-out numbers stop counting as errors. Written for voxeval; simpler than Whisper's.
"""

from __future__ import annotations

import functools
import re
import unicodedata

_BRACKETS = re.compile(r"[<\[][^>\]]*[>\]]|\([^)]*\)")
_FILLERS = {"hmm", "mm", "mhm", "mmm", "uh", "um", "er", "ah", "eh", "huh", "uhm", "erm"}
_CONTRACTION_TABLE = {
    r"\bwon't\b": "will not",
    r"\bcan't\b": "can not",
    r"\blet's\b": "let us",
    r"\bain't\b": "is not",
    r"n't\b": " not",
    r"'re\b": " are",
    r"'ve\b": " have",
    r"'ll\b": " will",
    r"'d\b": " would",
    r"'m\b": " am",
    r"\bit's\b": "it is",
    r"\bthat's\b": "that is",
    r"\bthere's\b": "there is",
    r"\bwhat's\b": "what is",
    r"\bhe's\b": "he is",
    r"\bshe's\b": "she is",
}
_CONTRACTIONS = [(re.compile(pattern), repl) for pattern, repl in _CONTRACTION_TABLE.items()]
_SPELLINGS = {
    "colour": "color",
    "colours": "colors",
    "favourite": "favorite",
    "centre": "center",
    "metre": "meter",
    "metres": "meters",
    "litre": "liter",
    "litres": "liters",
    "organise": "organize",
    "realise": "realize",
    "analyse": "analyze",
    "travelling": "traveling",
    "okay": "ok",
    "mr": "mister",
    "mrs": "missus",
    "dr": "doctor",
}
_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19,
}  # fmt: skip
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}  # fmt: skip
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000}
_SYMBOLS = {"%": " percent ", "&": " and ", "+": " plus ", "=": " equals ", "@": " at "}


def _strip_accents(text: str) -> str:
    return "".join(
        c for c in unicodedata.normalize("NFKD", text) if unicodedata.category(c) != "Mn"
    )


def _number_value(words: list[str]) -> int:
    total, current = 0, 0
    for w in words:
        if w in _UNITS:
            current += _UNITS[w]
        elif w in _TENS:
            current += _TENS[w]
        elif w == "hundred":
            current = max(current, 1) * 100
        else:  # thousand / million / billion
            total += max(current, 1) * _SCALES[w]
            current = 0
    return total + current


def _number_phrases(run: list[str]) -> list[list[str]]:
    """Split a run of number words into the numbers a speaker said one after another:
    "four one eight seven" is 4, 1, 8, 7 and "nineteen eighty four" is 19, 84; a unit after a
    tens word ("twenty one") or anything after a scale word continues the same number."""
    phrases: list[list[str]] = [[]]
    prev = ""
    for word in run:
        starts_new = (word in _UNITS and prev in _UNITS) or (
            word in _TENS and (prev in _UNITS or prev in _TENS)
        )
        if starts_new and phrases[-1]:
            phrases.append([])
        phrases[-1].append(word)
        prev = word
    return phrases


def words_to_digits(tokens: list[str]) -> list[str]:
    """Replace runs of spelled-out number words ("twenty five" -> "25"; digit by digit
    "four one eight" -> "418"); "and" inside a run ("one hundred and five") is absorbed."""
    out: list[str] = []
    run: list[str] = []
    number_words = _UNITS.keys() | _TENS.keys() | _SCALES.keys()

    def flush() -> None:
        if run:
            out.append("".join(str(_number_value(p)) for p in _number_phrases(run)))
            run.clear()

    for i, tok in enumerate(tokens):
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        if tok in number_words:
            run.append(tok)
        elif tok == "and" and run and run[-1] == "hundred" and nxt in number_words:
            continue
        else:
            flush()
            out.append(tok)
    flush()
    return out


@functools.lru_cache(maxsize=4096)
def normalize_english(text: str) -> str:
    """Lower-case words separated by single spaces, ready for jiwer."""
    s = _strip_accents(text.lower())
    s = _BRACKETS.sub(" ", s)
    s = s.replace("’", "'").replace("‘", "'")
    for pattern, repl in _CONTRACTIONS:
        s = pattern.sub(repl, s)
    s = re.sub(r"(\d),(\d{3})", r"\1\2", s)  # 1,000 -> 1000
    s = re.sub(r"\$\s*(\d[\d.]*)", r"\1 dollars", s).replace("$", " dollars ")
    s = re.sub(r"(\d)\.(\d)", r"\1<dot>\2", s)  # keep decimals through punctuation removal
    for sym, word in _SYMBOLS.items():
        s = s.replace(sym, word)
    s = re.sub(r"[^\w\s<>']|_", " ", s)
    s = s.replace("'", " ").replace("<dot>", ".")
    tokens = [_SPELLINGS.get(t, t) for t in s.split() if t not in _FILLERS]
    return " ".join(words_to_digits(tokens))
