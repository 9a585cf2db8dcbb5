"""The arena as the MTalk-Bench reference runs it (``scoring.arena.protocol: reference``).

One comparison is one judge verdict: the two dialogues in one order (which system is model A
is the seeded draw of the plan), judged once. The answer is ``{"winner", "reason"}``; only
"Model A" / "Model B" (or "A" / "B") count, anything else (a tie, "both") is skipped and
counted, as the reference skips it: there are no ties. The prompt is the dataset's own
``arena_prompt`` when the suite carries it (sent as the reference does, the prompt text with
the audio and no system message), else voxeval's prompt restricted to A or B. An answer
without ``winner`` and ``reason`` is a parse failure, retried up to ``judge_attempts``
requests in all. Online Elo (K 4) is replayed in judging order (``judged_at_ns``)."""

from __future__ import annotations

import time
from typing import Any

from voxeval.api.context import RunContext
from voxeval.json_types import JSONReadObject, JSONReadValue
from voxeval.scoring.call_judges.judged_call import RatedTemplate, share_template

REFERENCE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"winner": {"type": "string"}, "reason": {"type": "string"}},
    "required": ["winner", "reason"],
}
_SYSTEM = (
    "You compare two spoken dialogue systems. Each had the same multi-turn conversation with "
    "a user; you see (or hear) both conversations in full. Judge the {dimension} dimension: "
    "{focus} Judge the whole dialogue, not single turns; ignore which model came first. "
    "There is no tie: pick one. Answer only with JSON: "
    '{{"winner": "Model A" | "Model B", "reason": "one or two sentences"}}.'
)
_LABELS = {"a": "A", "model a": "A", "b": "B", "model b": "B"}


def reference_label(winner: JSONReadValue) -> str | None:
    """``A`` or ``B`` for the verdicts the reference accepts; None for anything else."""
    return _LABELS.get(str(winner).strip().lower()) if isinstance(winner, str) else None


def _rate(answer: JSONReadObject) -> float:
    # the value is not used: a skipped verdict is told by its label, not by a score
    return {"A": 1.0, "B": 0.0}.get(reference_label(answer.get("winner")) or "", 0.5)


def reference_template(user: str, dataset_prompt: str | None) -> RatedTemplate:
    """The dataset's own prompt (no system message, braces kept) or ours with ``user``."""
    if dataset_prompt:
        # escape braces: the dataset prompt is sent verbatim, not formatted
        text = dataset_prompt.replace("{", "{{").replace("}", "}}")
        return _template("arena_reference_dataset", "", text)
    return _template("arena_reference", _SYSTEM, user)


def _template(name: str, system: str, user: str) -> RatedTemplate:
    return share_template(name, system, user, REFERENCE_SCHEMA, _rate)


def dataset_arena_prompt(ctx: RunContext, dialogue_id: str) -> str | None:
    """The suite's own ``arena_prompt`` of a dialogue (``metadata.reference_prompts``), when
    the run's protocol can give its suite and the dialogue carries one."""
    if ctx.protocol is None:
        return None
    try:
        prompts = ctx.protocol.reference_prompts(ctx, dialogue_id)
    except Exception:  # the suite is gone: voxeval's prompt, said in the result
        return None
    prompt = prompts.get("arena_prompt")
    return prompt if isinstance(prompt, str) and prompt.strip() else None


def judged_now() -> int:
    """When a verdict was given (nanoseconds since the epoch): the judging order."""
    return time.time_ns()
