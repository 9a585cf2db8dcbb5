"""Golden tests of the entity extraction rule and spoken-form matching (no models)."""

import pytest

from voxeval.scoring.text.spoken_entities import (
    entity_spoken,
    extract_entities,
    known_entities_in,
    missed_entities,
)

KNOWN = {"last_name": "Patel", "date_of_birth": "1980-05-01", "member_id": "KX492B7"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Your confirmation code is K X 4 9 2 B 7.", ["K X 4 9 2 B 7"]),
        ("Your balance is $45.50, due on March 5th, 2025.", ["$45.50", "March 5th, 2025"]),
        ("Call 555-123-4567 or (555) 987 6543.", ["555-123-4567", "(555) 987 6543"]),
        ("Order 48213 ships on 5 March.", ["48213", "5 March"]),
        ("The total is 120 dollars, a 15 percent discount.", ["120 dollars", "15 percent"]),
        ("Ticket A-1234 is open.", ["A-1234"]),
        # no entity: greetings, small counts, times of day are not key entities here
        ("Hello, how can I help you today?", []),
        ("I have 2 options for you at 10 am.", []),
    ],
)
def test_pattern_entities_of_a_text(text: str, expected: list[str]) -> None:
    assert extract_entities(text) == expected


def test_known_entities_come_first_and_swallow_the_patterns_inside_them() -> None:
    text = "Thanks Mr. Patel, member K X 4 9 2 B 7, born May 1st, 1980, order 48213."
    # the spelled ID and the spoken date are the known entities; only the order is a pattern
    assert extract_entities(text, KNOWN) == ["Patel", "1980-05-01", "KX492B7", "48213"]
    assert known_entities_in(text, KNOWN) == ["Patel", "1980-05-01", "KX492B7"]
    assert known_entities_in("Hello there.", KNOWN) == []


def test_names_are_taken_only_from_known_entities() -> None:
    assert extract_entities("Dr. Nguyen will see you on Friday.") == []
    assert extract_entities("Dr. Nguyen will see you.", {"doctor": "Nguyen"}) == ["Nguyen"]


@pytest.mark.parametrize(
    ("entity", "transcript"),
    [
        ("K X 4 9 2 B 7", "Your confirmation code is KX492B7."),
        ("KX492B7", "k x four nine two b seven"),
        ("KX492B7", "KX-492-B7"),
        ("$45.50", "forty five dollars and fifty cents"),
        ("$45.50", "$45.50"),
        ("March 5th, 2025", "due on March 5, 2025"),
        ("1980-05-01", "born on May 1st, 1980"),
        ("1980-05-01", "born on the 1 May 1980"),
        ("555-123-4567", "five five five, one two three, four five six seven"),
        ("120 dollars", "The total is $120."),
        ("Patel", "thank you mister patel"),
    ],
)
def test_spoken_forms_match(entity: str, transcript: str) -> None:
    assert entity_spoken(entity, transcript, "en")


@pytest.mark.parametrize(
    ("entity", "transcript"),
    [
        ("KX492B7", "Your confirmation code is KX493B7."),
        ("$45.50", "$45.15"),
        ("March 5th, 2025", "March 6, 2025"),
        ("555-123-4567", "555-123-4568"),
        ("Patel", "thank you mister patil"),
    ],
)
def test_a_changed_character_is_a_miss(entity: str, transcript: str) -> None:
    assert not entity_spoken(entity, transcript, "en")


def test_missed_entities_keeps_order_and_names_only_the_misses() -> None:
    entities = ["KX492B7", "$45.50", "March 5th, 2025"]
    heard = "code KX 493 B7, $45.50 due March 5 2025"
    assert missed_entities(entities, heard, "en") == ["KX492B7"]
    assert missed_entities(entities, "", "en") == entities
