from __future__ import annotations

import pytest

from voxeval.scoring.text_normalizer import normalize_english, words_to_digits


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("Hello, World!", "hello world"),
        ("It's $5.50 (laughs), um, OK.", "it is 5.50 dollars ok"),
        ("I won't go to the centre.", "i will not go to the center"),
        ("[Music] The colour is 3.5%", "the color is 3.5 percent"),
        ("Twenty five people, 1,000 metres", "25 people 1000 meters"),
        ("one hundred and five", "105"),
        ("Café   naïve", "cafe naive"),
    ],
)
def test_normalize_english(raw: str, normalized: str) -> None:
    assert normalize_english(raw) == normalized


def test_words_to_digits_keeps_plain_and() -> None:
    assert words_to_digits(["bread", "and", "two", "eggs"]) == ["bread", "and", "2", "eggs"]
    assert words_to_digits(["three", "thousand", "two", "hundred"]) == ["3200"]


@pytest.mark.parametrize(
    ("spoken", "expected"),
    [
        ("four one eight seven", "4187"),
        ("nineteen eighty four", "1984"),
        ("zero nine two", "092"),
        ("twenty one", "21"),
        ("two thousand twenty six", "2026"),
        ("one hundred and five", "105"),
    ],
)
def test_number_runs_keep_digit_sequences(spoken: str, expected: str) -> None:
    assert normalize_english(spoken) == expected
