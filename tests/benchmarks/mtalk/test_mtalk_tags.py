"""Reading transcript annotations into render pieces."""

from __future__ import annotations

import pytest

from voxeval.benchmarks.mtalk.mtalk_tags import MIN_TEMPO, TagPiece, Words, parse_turn
from voxeval.errors import ConfigError


def test_cues_hold_to_the_end_and_same_aspect_replaces() -> None:
    pieces = parse_turn("<slow pace> one <sad tone> two <fast pace> three").pieces
    words = [p for p in pieces if isinstance(p, Words)]
    assert [w.text for w in words] == ["one", "two", "three"]
    assert words[0].delivery.tempo == 0.75 and words[0].delivery.cues == ("slow pace",)
    # sad tone adds its own tempo (x0.85) on top of the pace, kept within the floor of x0.7
    assert words[1].delivery.tempo == pytest.approx(MIN_TEMPO)
    assert words[1].delivery.pitch_st == -2.0 and words[1].delivery.approximations
    # fast pace replaces slow pace; the tone stays
    assert words[2].delivery.tempo == pytest.approx(1.25 * 0.85)
    assert set(words[2].delivery.cues) == {"fast pace", "sad tone"}


def test_speaker_b_speaks_up_to_the_next_tag_only() -> None:
    pieces = parse_turn(
        "Hi. <Speaker B interjects> Dinner! <Speaker A resumes> Sorry. [alarm] Ok"
    ).pieces
    words = [(p.speaker, p.text) for p in pieces if isinstance(p, Words)]
    assert words == [("A", "Hi."), ("B", "Dinner!"), ("A", "Sorry."), ("A", "Ok")]
    kinds = [p.kind for p in pieces if isinstance(p, TagPiece)]
    assert kinds == ["speaker", "speaker", "ambient"]


def test_b_gets_no_delivery_of_a() -> None:
    pieces = parse_turn("<angry tone> No. <Speaker B interjects> Calm down.").pieces
    b = next(p for p in pieces if isinstance(p, Words) and p.speaker == "B")
    assert b.delivery.neutral


def test_instructions_pauses_and_vocal_sounds() -> None:
    pieces = parse_turn("<respond in a calm voice> well <pause> [sigh] [laughs] ok").pieces
    tags = [(p.kind, p.name) for p in pieces if isinstance(p, TagPiece)]
    assert tags == [
        ("instruction", "respond in a calm voice"),
        ("pause", "pause"),
        ("vocal", "sigh"),
        ("vocal", "laughs"),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [("[dog barking] hi", r"unknown sound tag \[dog barking\]"),
     ("<sarcastic> hi", r"unknown cue <sarcastic>")],
)  # fmt: skip
def test_unknown_tags_are_errors(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=rf"d-1 turn 2: {message}"):
        parse_turn(text, "d-1 turn 2")
