"""A minimal stored multi-turn dialogue, read from ``dialogue.json`` in a unit folder: the
system's reply to each user turn, in order. Enough for metrics that look at the replies'
text (content density); the multi-turn protocol's full record can replace it.

``dialogue.json``: ``{"turns": [{"index": 1, "reply_text": "...", "user_text": "..."}, ...]}``
(``user_text`` optional; ``index`` orders the turns).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from voxeval.errors import ConfigError
from voxeval.json_types import JSONValue

DIALOGUE_FILE = "dialogue.json"


@dataclass(frozen=True)
class DialogueTurnReply:
    index: int
    reply_text: str | None
    user_text: str | None = None


@dataclass(frozen=True)
class DialogueReplies:
    """The replies of one dialogue, ordered by turn index."""

    turns: tuple[DialogueTurnReply, ...]
    dialogue_id: str | None = None

    @property
    def final(self) -> DialogueTurnReply | None:
        return self.turns[-1] if self.turns else None

    @classmethod
    def from_json(cls, data: JSONValue, where: str) -> DialogueReplies:
        listed = data.get("turns") if isinstance(data, dict) else None
        if not isinstance(data, dict) or not isinstance(listed, list):
            raise ConfigError(f"{where}: turns: expected a list of turns")
        turns: list[DialogueTurnReply] = []
        for position, raw in enumerate(listed):
            field = f"{where}: turns.{position}"
            if not isinstance(raw, dict):
                raise ConfigError(f"{field}: expected a mapping")
            index = raw.get("index")
            if isinstance(index, bool) or not isinstance(index, int):
                raise ConfigError(f"{field}.index: expected an integer, got {index!r}")
            reply = _text_or_null(raw.get("reply_text"), f"{field}.reply_text")
            user = _text_or_null(raw.get("user_text"), f"{field}.user_text")
            turns.append(DialogueTurnReply(index, reply, user))
        indices = [t.index for t in turns]
        if len(set(indices)) != len(indices):
            raise ConfigError(f"{where}: turns: an index appears twice ({indices})")
        dialogue_id = data.get("dialogue_id") or data.get("id")
        if dialogue_id is not None and not isinstance(dialogue_id, str):
            raise ConfigError(f"{where}: dialogue_id: expected text, got {dialogue_id!r}")
        return cls(tuple(sorted(turns, key=lambda t: t.index)), dialogue_id)

    @classmethod
    def from_unit_dir(cls, unit_dir: str | Path) -> DialogueReplies:
        path = Path(unit_dir) / DIALOGUE_FILE
        if not path.is_file():
            raise ConfigError(f"{path}: not found")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from exc
        return cls.from_json(data, str(path))


def _text_or_null(value: JSONValue, field: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{field}: expected text or null")
    return value
