"""Rubric judging of a multi-turn dialogue (MTalk-Bench): binary criteria at three levels.

The judge reads the dialogue as an annotated transcript (the user's words with their tags,
``[phone ringing]``, ``<anxious tone>``, and the system's replies) and the accepted criteria
with their ids, and answers ``{criterion_id: 0|1}``. The answer must hold exactly the ids it
was given: an unknown id (the reference accepts a ``criteria_d_5`` it never listed) or a
missing one is a parse failure, counted and retried like malformed JSON.

``rubric``: S_case = the mean over all criteria of the whole dialogue (0..1; reports show the
model score x100). Details hold the value of every criterion and the mean per level.

``rubric_turns``: the dialogue truncated after each user turn k (T1..Tn), each prefix judged
on its own. A prefix is judged on the general and dimension criteria only: sample-level
criteria are written about the whole dialogue (often its last turn) and cannot be met or
failed by a prefix that stops before the turn they concern. The value is the mean of T1..Tn;
the details hold each T_k and its criterion values.

Both read either the annotated transcript (``rubric_mode: text``, the default) or, with
``rubric_mode: audio``, the dialogue's own audio sent to the audio judge: per turn a spoken
cue "Turn N", the user's recording, a cue "Model's response" and the reply (the reference's
layout; rendered by the protocol, ``DialogueScoringResources.hear``). The answer format and
its checks are the same; ``judged_from`` in the details says which input was used.

With ``rubric_protocol: reference`` the ``rubric`` metric makes the reference's two audio-judge
calls per dialogue: the general prompt (general and dimension criteria) and the sample prompt
(sample criteria), each the dataset's own prompt when the suite carries it (sent as the
reference sends it: the prompt text with the audio, no system message), else voxeval's prompt
for those criteria. The value is the share of all criteria met, as in voxeval's one call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jsonschema

from voxeval.errors import ProviderUnavailable
from voxeval.json_types import JSONObject, JSONReadValue
from voxeval.scoring.call_judges.judged_call import RatedTemplate, Rater, run_judge, share_template
from voxeval.scoring.dialogues.dialogue_record import (
    DialogueRecord,
    DialogueScoringResources,
    DialogueTurn,
    RubricCriterion,
)
from voxeval.scoring.judge import Judge, JudgeOutputError
from voxeval.scoring.judge_answer import as_int
from voxeval.scoring.metric import FailureValue, metric
from voxeval.scoring.score import Score

LEVELS = ("general", "dimension", "sample")
PREFIX_LEVELS = ("general", "dimension")

SYSTEM = """You evaluate a spoken assistant in a multi-turn conversation with a user. The \
conversation is given as an annotated transcript: the user's words with annotations in \
square brackets for sounds and events ([laughs], [phone ringing]) and in angle brackets for \
how something was said (<anxious tone>, <slow pace>). The assistant heard the audio, so it \
could perceive what the annotations describe. Judge each criterion strictly: 1 when the \
assistant's replies meet it, 0 when they do not. Answer with a JSON object only."""

USER = """Dimension of this dialogue: {dimension}

Conversation:
{transcript}

Criteria ({count}):
{criteria}

Answer with one JSON object whose keys are exactly these criterion ids ({ids}) and whose \
values are 1 (met) or 0 (not met). Add no other keys."""


AUDIO_SYSTEM = """You evaluate a spoken assistant in a multi-turn conversation with a user, \
which you hear. For each turn the audio has a spoken cue "Turn N", then the user speaking, a \
cue "Model's response" and the assistant's spoken reply, with a second of silence between \
them. Listen to how the user speaks and to the sounds around them as well as to the words: \
the assistant heard the same audio. Judge each criterion strictly: 1 when the assistant's \
replies meet it, 0 when they do not. Answer with a JSON object only."""

AUDIO_USER = """Dimension of this dialogue: {dimension}

The conversation ({turns} turns) is in the audio.

Criteria ({count}):
{criteria}

Answer with one JSON object whose keys are exactly these criterion ids ({ids}) and whose \
values are 1 (met) or 0 (not met). Add no other keys."""


def dialogue_transcript(turns: Sequence[DialogueTurn]) -> str:
    lines = []
    for turn in turns:
        reply = turn.reply_text if turn.reply_text is not None else "(no reply)"
        user = turn.user_text or "(nothing)"
        lines.append(f"Turn {turn.index}\n  User: {user}\n  Assistant: {reply}")
    return "\n".join(lines)


def format_criteria(criteria: Sequence[RubricCriterion]) -> str:
    lines = []
    for level in LEVELS:
        chosen = [c for c in criteria if c.level == level]
        if chosen:
            lines.append(f"{level} criteria:")
            lines += [f"  {c.id}: {c.text}" for c in chosen]
    return "\n".join(lines)


def answer_schema(ids: Sequence[str]) -> JSONObject:
    """Exactly ``ids`` as keys, each 0 or 1: an unknown or a missing id fails validation."""
    return {
        "type": "object",
        "properties": {cid: {"type": "integer", "enum": [0, 1]} for cid in ids},
        "required": list(ids),
        "additionalProperties": False,
    }


def _rate_exactly(ids: Sequence[str]) -> Rater:
    schema = answer_schema(ids)

    def rate(answer: JSONObject) -> float:
        try:
            jsonschema.validate(answer, schema)
        except jsonschema.ValidationError as exc:
            unknown = sorted(set(answer) - set(ids))
            missing = sorted(set(ids) - set(answer))
            raise JudgeOutputError(
                f"the answer must give 0 or 1 for exactly the listed ids (unknown ids "
                f"{unknown}, missing ids {missing}): {exc.message}"
            ) from exc
        return sum(as_int(answer[cid], cid) for cid in ids) / len(ids)

    return rate


def rubric_template(ids: Sequence[str], mode: str = "text") -> RatedTemplate:
    """The answer is validated here, not by the provider: a provider that validates a
    response schema retries a bad answer itself, out of sight of the judge's parse-failure
    count. So no schema is sent; the prompt states the format and ``rate`` checks it."""
    audio = mode == "audio"
    return share_template(
        "mtalk-rubric-audio" if audio else "mtalk-rubric",
        AUDIO_SYSTEM if audio else SYSTEM,
        AUDIO_USER if audio else USER,
        rate=_rate_exactly(ids),
    )


def _variables(
    record: DialogueRecord, turns: Sequence[DialogueTurn], criteria: Sequence[RubricCriterion]
) -> dict[str, str | int]:
    ids = [c.id for c in criteria]
    return {
        "dimension": record.dimension,
        "transcript": dialogue_transcript(turns),
        "turns": len(turns),
        "criteria": format_criteria(criteria),
        "count": len(criteria),
        "ids": ", ".join(ids),
    }


def _builder(
    criteria: Sequence[RubricCriterion],
) -> Callable[[float, Mapping[str, JSONReadValue]], Score]:
    def build(value: float, answer: Mapping[str, JSONReadValue]) -> Score:
        per_level = {}
        for level in LEVELS:
            chosen = [as_int(answer[c.id], c.id) for c in criteria if c.level == level]
            if chosen:
                per_level[level] = sum(chosen) / len(chosen)
        return Score(
            value=value,
            details={
                "criteria": {c.id: as_int(answer[c.id], c.id) for c in criteria},
                "levels": {c.id: c.level for c in criteria},
                "by_level": per_level,
                "n_criteria": len(criteria),
            },
        )

    return build


def rubric_judge(resources: DialogueScoringResources) -> Judge:
    """The judge of the configured input: the text judge, or the audio judge (raising
    ``ProviderUnavailable``, so the metric is not run with the reason, without one)."""
    if resources.rubric_mode != "audio":
        return resources.judge()
    if resources.audio_judge is None or resources.hear is None:
        raise ProviderUnavailable("rubric mode audio needs an audio judge (audio_judge:)")
    return resources.audio_judge()


def _judged(
    judge: Judge,
    record: DialogueRecord,
    turns: Sequence[DialogueTurn],
    criteria: Sequence[RubricCriterion],
    resources: DialogueScoringResources,
) -> Score:
    mode = resources.rubric_mode
    facts = {
        "dialogue": record.dialogue_id,
        "turns_judged": len(turns),
        "judged_from": "audio" if mode == "audio" else "transcript",
    }
    ids = [c.id for c in criteria]
    audio = None
    if mode == "audio":
        assert resources.hear is not None  # rubric_judge checked it
        audio = resources.hear(record, len(turns))
    return run_judge(
        judge,
        rubric_template(ids, mode),
        _variables(record, turns, criteria),
        _builder(criteria),
        facts,
        audio=audio,
    )


# (name of the call, levels it covers, the dataset prompt that asks for them)
REFERENCE_CALLS = (
    ("general", ("general", "dimension"), "rubric_prompt_general"),
    ("sample", ("sample",), "rubric_prompt_specific"),
)


def _dataset_template(ids: Sequence[str], prompt: str) -> RatedTemplate:
    return share_template(
        "mtalk-rubric-reference",
        "",
        prompt.replace("{", "{{").replace("}", "}}"),  # sent verbatim
        rate=_rate_exactly(ids),
    )


def _reference_calls(
    judge: Judge, record: DialogueRecord, resources: DialogueScoringResources
) -> Score:
    """The reference's calls (see the module doc); pending as soon as one call is."""
    values: dict[str, int] = {}
    calls: dict[str, str] = {}
    accounting: dict[str, Any] = {}
    audio = resources.hear(record, len(record.turns)) if resources.hear is not None else None
    for name, levels, field in REFERENCE_CALLS:
        chosen = [c for c in record.criteria if c.level in levels]
        if not chosen:
            continue
        ids = [c.id for c in chosen]
        prompt = record.prompts.get(field)
        template = (
            _dataset_template(ids, prompt)
            if prompt
            else rubric_template(ids, resources.rubric_mode)
        )
        calls[name] = "dataset" if prompt else "voxeval"
        facts = {"dialogue": record.dialogue_id, "call": name}
        score = run_judge(
            judge, template, _variables(record, record.turns, chosen), _builder(chosen), facts,
            audio=audio,
        )  # fmt: skip
        for key in ("judge_calls", "judge_requests", "parse_failures"):
            accounting[key] = accounting.get(key, 0) + int(score.details.get(key) or 0)
        if score.pending or not score.ran:
            return Score(
                value=None,
                details={**accounting, "failed_call": name, "calls": calls},
                error=f"{name} call: {score.error}",
                pending=score.pending,
            )
        values.update(score.details["criteria"])
    answer = {c.id: values[c.id] for c in record.criteria}
    built = _builder(record.criteria)(sum(answer.values()) / len(answer), answer)
    return Score(
        value=built.value,
        details={
            **built.details,
            **accounting,
            "calls": calls,
            "protocol": "reference",
            "judge": judge.identity(),
            "judged_from": "audio" if resources.rubric_mode == "audio" else "transcript",
        },
    )


@metric(
    "rubric",
    better="higher",
    failure=FailureValue(0.0, None, "a failed dialogue meets no criterion"),
    protocols=("multi_turn",),
)
def rubric(record: DialogueRecord, resources: DialogueScoringResources) -> Score:
    if not record.criteria:
        return Score.not_run(f"dialogue {record.dialogue_id!r} has no accepted criteria")
    judge = rubric_judge(resources)  # ProviderUnavailable -> not run with the reason
    if resources.rubric_protocol == "reference":
        return _reference_calls(judge, record, resources)
    return _judged(judge, record, record.turns, record.criteria, resources)


@metric(
    "rubric_turns",
    better="higher",
    failure=FailureValue(0.0, None, "a failed dialogue meets no criterion at any turn"),
    protocols=("multi_turn",),
)
def rubric_turns(record: DialogueRecord, resources: DialogueScoringResources) -> Score:
    criteria = [c for c in record.criteria if c.level in PREFIX_LEVELS]
    if not criteria:
        return Score.not_run(
            f"dialogue {record.dialogue_id!r} has no accepted general or dimension criteria "
            "(turn-level scores use those only)"
        )
    judge = rubric_judge(resources)
    per_prefix: dict[str, Any] = {}
    accounting: dict[str, float] = {}
    for k in range(1, len(record.turns) + 1):
        score = _judged(judge, record, record.turns[:k], criteria, resources)
        for key in ("judge_calls", "judge_requests", "parse_failures"):
            accounting[key] = accounting.get(key, 0) + int(score.details.get(key) or 0)
        if score.pending or not score.ran:
            return Score(
                value=None,
                details={**accounting, "turns": per_prefix, "failed_prefix": f"T{k}"},
                error=f"T{k}: {score.error}",
                pending=score.pending,
            )
        per_prefix[f"T{k}"] = {
            "value": score.value,
            "criteria": score.details["criteria"],
        }
    values = [float(p["value"]) for p in per_prefix.values()]
    return Score(
        value=sum(values) / len(values),
        details={
            **accounting,
            "turns": per_prefix,
            "criteria_used": [c.id for c in criteria],
            "judge": judge.identity(),
            "judged_from": "audio" if resources.rubric_mode == "audio" else "transcript",
        },
    )
