"""Gold (attention) items: copies of real items in which a system's reply is replaced by the
attention clip (``study_clips.attention_clip``), so the right answer is known without anyone
having to decide it.

- arena: one side's reply at every turn is the clip; the other side must win
  (``gold = {"choice": other side}``). Which side is broken is drawn with the study seed.
- rubric: every reply is the clip; no criterion is met (``gold = {"criteria": {id: 0}}``).
- score: every reply is the clip; the score must be 1 or 2 (``gold = {"min": 1, "max": 2}``).
- record: a recording has no known answer; ``--gold`` is refused.

The base items are drawn with the study seed, without replacement (at most one gold copy of
each item); gold items are excluded from every rating and reported on their own."""

from __future__ import annotations

import random
from collections.abc import Sequence

from voxeval.errors import ConfigError
from voxeval.raters.study.study_audio import StudyAudio
from voxeval.raters.study.study_clips import attention_clip
from voxeval.raters.study.study_files import StudyItem

GOLD_PREFIX = "gold:"
BROKEN_ROLES = {"arena": ("a", "b"), "rubric": ("reply",), "score": ("reply",)}


def gold_items(
    task: str, items: Sequence[StudyItem], count: int, audio: StudyAudio, seed: int
) -> list[StudyItem]:
    if count <= 0:
        return []
    if task not in BROKEN_ROLES:
        raise ConfigError(f"--gold: the {task} task has no known answers to check")
    if count > len(items):
        raise ConfigError(f"--gold {count}: the study has only {len(items)} items to copy")
    rng = random.Random(f"voxeval-gold:{seed}")
    bases = rng.sample(list(items), count)
    clip, made_by = attention_clip(task)
    out = []
    for base in bases:
        item_id = f"{GOLD_PREFIX}{base.item_id}"
        broken_side = rng.choice(("a", "b")) if task == "arena" else "reply"
        stimuli = []
        for stimulus in base.stimuli:
            if stimulus.role == broken_side:
                path, seconds = audio.write(clip, item_id, stimulus.id)
            else:
                original = audio.study_dir / stimulus.path
                path, seconds = audio.copy(original, item_id, stimulus.id, f"item {base.item_id}")
            stimuli.append(stimulus.model_copy(update={"path": path, "duration_s": seconds}))
        if task == "arena":
            gold: dict[str, object] = {"choice": "b" if broken_side == "a" else "a"}
        elif task == "rubric":
            gold = {"criteria": {c.id: 0 for c in base.criteria}}
        else:
            gold = {"min": 1, "max": 2}
        source = {
            **base.source,
            "gold_of": base.item_id,
            "broken": broken_side,
            "attention_clip": made_by,
        }
        out.append(
            base.model_copy(
                update={
                    "item_id": item_id,
                    "kind": "gold",
                    "stimuli": stimuli,
                    "gold": gold,
                    "source": source,
                }
            )
        )
    return out
