"""The clause splitter of content density: where clauses end and how words are counted."""

from __future__ import annotations

import pytest

from voxeval.scoring.dialogues.clause_split import split_clauses, words


@pytest.mark.parametrize(
    ("text", "clauses"),
    [
        (
            "I am so sorry to hear that. Drink plenty of water, and rest for two days.",
            ["I am so sorry to hear that.", "Drink plenty of water,", "and rest for two days."],
        ),
        # a decimal point and commas inside a list do not split; ; : ! ? and line breaks do
        (
            "Take 3.5 mg of it; that is all! Bring eggs, milk, flour:\n- a bowl\n- a whisk?",
            [
                "Take 3.5 mg of it;",
                "that is all!",
                "Bring eggs, milk, flour:",
                "- a bowl",
                "- a whisk?",
            ],
        ),
        # a subordinating word after a comma starts a clause, without a comma it does not
        (
            "Call me if it hurts, because I can help when you need it.",
            ["Call me if it hurts,", "because I can help when you need it."],
        ),
        ("", []),
        ("Okay. ...", ["Okay. ..."]),  # a piece with no word joins the clause before it
    ],
)
def test_split_clauses(text: str, clauses: list[str]) -> None:
    assert split_clauses(text) == clauses


def test_every_word_is_in_exactly_one_clause() -> None:
    text = "Well, I think so, but ask again. It's 1,200 steps; a follow-up visit helps!"
    assert [w for c in split_clauses(text) for w in words(c)] == words(text)


def test_words_keep_contractions_hyphens_and_numbers_whole() -> None:
    assert words("Don't book a follow-up: 3.5 mg, 1,200 pills - now.") == [
        "Don't", "book", "a", "follow-up", "3.5", "mg", "1,200", "pills", "now",
    ]  # fmt: skip
