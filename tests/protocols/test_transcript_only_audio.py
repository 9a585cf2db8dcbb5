"""A transcript-only reply (a released reply whose recording is absent) heard by an audio
judge: its text is spoken in its place, while a reply with no audio and no transcript-only
label (a system that said nothing) stays the cue "no spoken response"."""

from __future__ import annotations

import json
from pathlib import Path

from voxeval.audio import Audio
from voxeval.protocols.arena.inputs import (
    DIALOGUE_FILE,
    NO_SPOKEN_REPLY_CUE,
    load_dialogue,
    turn_segments,
)
from voxeval.providers.tts.tts_espeak import EspeakTTS


def test_a_transcript_only_reply_is_spoken_from_its_text(tmp_path: Path) -> None:
    turns = [
        {"index": 1, "user_text": "[rain] Is it wet?", "user_audio": None,
         "reply_text": "Take an umbrella.", "reply_audio": None, "reply_duration_s": None,
         "timing": {}, "reply_transcript_only": True},
        {"index": 2, "user_text": "Thanks.", "user_audio": None, "reply_text": None,
         "reply_audio": None, "reply_duration_s": None, "timing": {}},
    ]  # fmt: skip
    document = {"dialogue": "amb-1", "system": "GPT-4o", "dimension": "ambient", "turns": turns}
    (tmp_path / DIALOGUE_FILE).write_text(json.dumps(document), encoding="utf-8")
    stored = load_dialogue(tmp_path)
    assert [t.reply_transcript_only for t in stored.turns] == [True, False]
    tts = EspeakTTS()
    said: list[str] = []

    def speak(text: str) -> Audio:
        said.append(text)
        return tts.synthesize(text)

    segments = turn_segments(stored, speak)
    assert [name for name, _ in segments][3] == "turn 1 reply"
    # cue, user (its words without the tag), cue, the reply's text; then turn 2
    assert said == [
        "Turn 1.", "Is it wet?", "Model's response.", "Take an umbrella.",
        "Turn 2.", "Thanks.", "Model's response.", NO_SPOKEN_REPLY_CUE,
    ]  # fmt: skip
    assert segments[3][1].duration > 0.5  # speech, not an empty part
