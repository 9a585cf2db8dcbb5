"""Reading ``transcripts.json`` back: a file of another layout is recomputed, never trusted."""

import json

import pytest

from voxeval.scoring.replies.transcripts import (
    TRANSCRIPTS_FILE,
    Candidate,
    TranscriptSet,
    TranscriptSettings,
    load_transcripts,
    save_transcripts,
)

SETTINGS = TranscriptSettings(k=1, max_decodes=2)
IDENTITY = {"model": "tiny"}


def _stored() -> TranscriptSet:
    candidate = Candidate("hello there", 0.0, None, False)
    return TranscriptSet(("hello there",), "hello there", (candidate,), 0, 0, SETTINGS, IDENTITY)


def test_a_stored_set_is_read_back(tmp_path):
    save_transcripts(tmp_path, _stored())
    assert load_transcripts(tmp_path, SETTINGS, IDENTITY) == _stored()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("greedy", 3),  # not text
        ("texts", "hello there"),  # a string, not a list of texts
        ("settings", {**vars(SETTINGS), "beam": 5}),  # a field this version does not know
        ("rejected", "0"),
    ],
)
def test_a_malformed_file_is_recomputed(tmp_path, field, value):
    data = _stored().to_dict()
    (tmp_path / TRANSCRIPTS_FILE).write_text(json.dumps({**data, field: value}))
    assert load_transcripts(tmp_path, SETTINGS, IDENTITY) is None


def test_a_wrong_field_is_named():
    data = json.loads(json.dumps(_stored().to_dict()))
    data["candidates"][0]["seed"] = "7"
    with pytest.raises(ValueError, match=r"candidates\.seed"):
        TranscriptSet.from_dict(data)
