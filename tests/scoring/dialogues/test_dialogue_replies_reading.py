"""Reading a dialogue's replies (``dialogue.json``): a field of the wrong type names it."""

import pytest

from voxeval.errors import ConfigError
from voxeval.scoring.dialogues.dialogue_replies import DialogueReplies


def test_turns_are_ordered_and_the_id_kept():
    data = {"id": "d1", "turns": [{"index": 2, "reply_text": "b"}, {"index": 1, "user_text": "a"}]}
    record = DialogueReplies.from_json(data, "dialogue.json")
    assert [t.index for t in record.turns] == [1, 2]
    assert record.dialogue_id == "d1"
    assert record.final is not None and record.final.reply_text == "b"


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"turns": {}}, "dialogue.json: turns"),
        ({"turns": [{"index": 1, "user_text": 3}]}, "dialogue.json: turns.0.user_text"),
        ({"dialogue_id": 7, "turns": []}, "dialogue.json: dialogue_id"),
    ],
)
def test_a_malformed_field_is_named(data, field):
    with pytest.raises(ConfigError, match=field):
        DialogueReplies.from_json(data, "dialogue.json")
