"""Property tests of normalisation and word error rate."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from voxeval.scoring.text.text_normaliser import normalise_english, normaliser_for
from voxeval.scoring.text.word_errors import word_errors

_UNITS = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen",
]  # fmt: skip
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_SCALES = ((10**9, "billion"), (10**6, "million"), (1000, "thousand"))


def _below_thousand(n: int) -> list[str]:
    words: list[str] = []
    if n >= 100:
        words += [_UNITS[n // 100], "hundred"]
        n %= 100
    if n >= 20:
        words.append(_TENS[n // 10] + (f"-{_UNITS[n % 10]}" if n % 10 else ""))
    elif n:
        words.append(_UNITS[n])
    return words


def spelled(n: int) -> str:
    """American English words for 0 <= n < 10**12 ("one million two hundred thirty-four ...")."""
    if n == 0:
        return "zero"
    words: list[str] = []
    for scale, name in _SCALES:
        if n >= scale:
            words += [*_below_thousand(n // scale), name]
            n %= scale
    return " ".join(words + _below_thousand(n))


# Words, numbers and symbols the English normaliser rewrites, so generated texts exercise
# its rules rather than only plain letters.
_TOKENS = st.sampled_from(
    [
        "one", "two", "twenty", "hundred", "thousand", "million", "point", "five", "and",
        "a", "half", "dollars", "cents", "$", "%", "first", "second", "the", "o'clock",
        "7:30", "12:00", "1,234", "3.5", "ok", "it's", "(aside)", "[noise]", "um", "p.m.",
        "-", "1", "0", "oh", "zero", ",", ".", "?", "twelve", "seventh", "ones", "£", "€",
        "¢", "s", "th", "thirty", "pounds", "percent", "minus", "plus", "mr", "colour",
        "1st", "1990s", "9am", "0.5", "$0.50", "07", "'", ":", "00", "Moon", "km",
    ]
)  # fmt: skip
_MIXED_TEXT = st.lists(_TOKENS, max_size=12).map(" ".join)
_ANY_TEXT = st.one_of(_MIXED_TEXT, st.text(max_size=40))
_SENTENCE = st.lists(
    st.one_of(_TOKENS, st.from_regex(r"[A-Za-z]{1,8}", fullmatch=True)), min_size=1, max_size=12
).map(" ".join)


@settings(max_examples=400, deadline=None)
@given(_ANY_TEXT)
def test_english_normalising_is_idempotent(text: str) -> None:
    once = normalise_english(text)
    assert normalise_english(once) == once


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40), st.sampled_from(["de", "fr", "hi", "ja"]))
def test_basic_normalising_is_idempotent(text: str, language: str) -> None:
    normalise = normaliser_for(language)
    once = normalise(text)
    assert normalise(once) == once


@settings(max_examples=300, deadline=None)
@given(_ANY_TEXT, st.sampled_from(["en", "de"]))
def test_wer_of_a_text_against_itself_is_zero(text: str, language: str) -> None:
    counts = word_errors(text, text, language)
    assert counts.errors == 0
    assert counts.wer in (0.0, None)  # None only when nothing is left to compare


@settings(max_examples=300, deadline=None)
@given(_SENTENCE)
def test_empty_hypothesis_has_wer_one(text: str) -> None:
    counts = word_errors(text, "")
    if counts.ref_words:
        assert counts.wer == 1.0
        assert counts.deletions == counts.ref_words


@settings(max_examples=400, deadline=None)
@given(
    st.integers(min_value=0, max_value=10**15),
    st.sampled_from(["{}", "about {} km", "it costs ${}", "{} people came.", "in {}, then"]),
)
def test_thousands_separators_do_not_count_as_errors(number: int, template: str) -> None:
    with_commas = template.format(f"{number:,}")
    plain = template.format(str(number))
    assert word_errors(with_commas, plain).errors == 0
    assert word_errors(plain, with_commas).errors == 0


@settings(max_examples=400, deadline=None)
@given(st.integers(min_value=2, max_value=10**12 - 1))
def test_spelled_out_numbers_match_digits(number: int) -> None:
    sentence = "we counted {} stars"
    assert word_errors(sentence.format(f"{number:,}"), sentence.format(spelled(number))).wer == 0


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=1000, max_value=10**18))
def test_a_thousands_separated_number_is_one_token(number: int) -> None:
    assert normalise_english(f"{number:,}").split() == [str(number)]
