"""Where the recordings a model-outputs file (``sample.json``) names actually are.

The file names paths such as ``./audio_new/scene1/record_1-1/1-1-turn1_sem.wav``; the
public repository ships none of those folders, but keeps the question recordings flat under
``static/audio/`` (``static/audio/1-1-turn1_sem.wav``). Each path is looked up, in order of
the roots, as

1. the path itself under the root (``ROOT/audio_new/scene1/...``),
2. its file name directly in the root (``ROOT/1-1-turn1_sem.wav``),
3. its file name in the root's ``static/audio/`` (the repository's web-page layout).

A file name is only looked up on its own (2 and 3) when no other path of the file shares it:
two models' replies are both called ``1-1-turn1_sem_answer.wav`` in different folders, and a
bare name cannot say whose it is.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath

from voxeval.json_types import JSONReadObject

STATIC_AUDIO = Path("static") / "audio"


def _name(value: str) -> str:
    return PurePosixPath(value.replace("\\", "/")).name


class AudioSearch:
    """Finds the recordings of one file's paths under ``roots`` (searched in order)."""

    def __init__(self, roots: Sequence[Path], paths: Iterable[str]) -> None:
        self.roots = list(dict.fromkeys(root.resolve() for root in roots))
        # a name given by several different paths is ambiguous on its own
        names = Counter(_name(p) for p in set(paths))
        self._unique = {name for name, n in names.items() if n == 1}

    def candidates(self, value: str) -> list[Path]:
        """Every place ``value`` is looked for, in order."""
        target = Path(value)
        if target.is_absolute():
            return [target]
        name = _name(value)
        found: list[Path] = []
        for root in self.roots:
            found.append((root / target).resolve())
            if name in self._unique:
                found += [root / name, root / STATIC_AUDIO / name]
        return list(dict.fromkeys(found))

    def find(self, value: str) -> Path | None:
        """The first existing file for ``value``; None when it is under no root."""
        return next((c for c in self.candidates(value) if c.is_file()), None)


def paths_in(data: JSONReadObject) -> list[str]:
    """Every audio path a model-outputs mapping names (questions and replies)."""
    out: list[str] = []
    for dialogues in data.values():
        for dialogue in dialogues if isinstance(dialogues, list) else ():
            for turn in dialogue if isinstance(dialogue, list) else ():
                if not isinstance(turn, dict):
                    continue
                question = turn.get("question")
                if isinstance(question, str):
                    out.append(question)
                answers = turn.get("dialogue")
                if isinstance(answers, dict):
                    out += [p for p in answers.values() if isinstance(p, str)]
    return out
