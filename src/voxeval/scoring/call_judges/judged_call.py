"""Shared machinery of the judged call metrics: a JSON judge template whose answer is
validated against a schema and then rated by a metric-specific rule, and the one place that
turns a judge's answer (or its failure to give one) into a ``Score``.

A judge that never answers in format after its attempts is a fault on our side: the score is
*pending* (retried by the next run or score), with the parse failures in its details."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import jsonschema

from voxeval.audio import Audio
from voxeval.json_types import JSONObject, JSONReadValue, JSONValue
from voxeval.providers.llm.llm_output import extract_json
from voxeval.scoring.call_judges.judged_ratings import (
    RATING_MAX,
    RATING_MIN,
    normalise_rating,
    passes,
)
from voxeval.scoring.judge import (
    Judge,
    JudgeOutputError,
    JudgeResult,
    JudgeTemplate,
    JudgeVariables,
    summed_accounting,
)
from voxeval.scoring.judge_answer import as_int, as_number, as_object, as_objects
from voxeval.scoring.score import Score

Rater = Callable[[JSONObject], float]


@dataclass(frozen=True)
class RatedTemplate(JudgeTemplate):
    """A ``json`` template whose score is computed by ``rate`` from the validated answer;
    ``rate`` raises ``JudgeOutputError`` for an answer the schema cannot rule out (a missing
    turn), which the judge then retries and counts as a parse failure."""

    rate: Rater | None = None

    def parse(self, text: str, parsed: JSONValue = None) -> tuple[float, JSONObject | None]:
        if parsed is None:
            try:
                parsed = extract_json(text or "")
            except ValueError as exc:
                raise JudgeOutputError(f"answer is not JSON ({exc})") from exc
        if self.schema is not None:
            try:
                jsonschema.validate(parsed, self.schema)
            except jsonschema.ValidationError as exc:
                raise JudgeOutputError(f"JSON does not match the schema: {exc.message}") from exc
        if self.rate is None or not isinstance(parsed, dict):
            raise JudgeOutputError("answer is not a JSON object")
        return self.rate(parsed), parsed


def _json_template(
    name: str,
    system: str,
    user: str,
    schema: JSONObject | None,
    rate: Rater | None,
    scale: tuple[int, int],
    *,
    integer: bool = True,
) -> RatedTemplate:
    return RatedTemplate(
        name=name,
        system=system,
        user=user,
        output="json",
        min_score=scale[0],
        max_score=scale[1],
        integer=integer,
        schema=schema,
        rate=rate,
    )


def share_template(
    name: str,
    system: str,
    user: str,
    schema: JSONObject | None = None,
    rate: Rater | None = None,
) -> RatedTemplate:
    """A JSON template whose value is a share in 0-1 (not a whole number); a metric that
    rates per call binds ``rate`` once it knows which turns or cases the judge must answer
    for."""
    return _json_template(name, system, user, schema, rate, (0, 1), integer=False)


def verdict_template(
    name: str, system: str, user: str, schema: JSONObject, rate: Rater
) -> RatedTemplate:
    """A JSON template whose value is a whole verdict, 0 or 1, read by ``rate``."""
    return _json_template(name, system, user, schema, rate, (0, 1))


def rating_template(
    name: str, system: str, user: str, schema: JSONObject, rate: Rater
) -> RatedTemplate:
    """A JSON template whose value is a whole rating on the 1-3 scale, read by ``rate``."""
    return _json_template(name, system, user, schema, rate, (RATING_MIN, RATING_MAX))


def dimensions_template(
    name: str,
    system: str,
    user: str,
    dimensions: tuple[str, ...],
    combine: Callable[[Mapping[str, int]], int],
) -> RatedTemplate:
    """A rating template whose answer rates each of ``dimensions`` 1-3 with evidence; the
    call's rating is ``combine`` of those ratings."""
    return rating_template(
        name,
        system,
        user,
        dimensions_schema(dimensions),
        lambda answer: float(combine(dimension_ratings(answer))),
    )


def number_field(key: str) -> Rater:
    """A rater that reads the answer's numeric field ``key`` as the value."""

    def rate(answer: JSONObject) -> float:
        return as_number(answer[key], key)

    return rate


def rating_property(low: int = RATING_MIN, high: int = RATING_MAX) -> JSONObject:
    return {"type": "integer", "minimum": low, "maximum": high}


def dimensions_schema(names: tuple[str, ...]) -> JSONObject:
    """``{"dimensions": {NAME: {"rating": 1-3, "evidence": str}}}`` with every name required."""
    one: JSONObject = {
        "type": "object",
        "properties": {"rating": rating_property(), "evidence": {"type": "string"}},
        "required": ["rating", "evidence"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "dimensions": {
                "type": "object",
                "properties": {name: one for name in names},
                "required": list(names),
                "additionalProperties": False,
            }
        },
        "required": ["dimensions"],
        "additionalProperties": False,
    }


def turns_schema(fields: JSONObject) -> JSONObject:
    """``{"turns": [{"turn": N, FIELD: ...}, ...]}`` with every field of ``fields`` required
    (in the order given, after ``turn``)."""
    return {
        "type": "object",
        "properties": {
            "turns": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"turn": {"type": "integer"}, **fields},
                    "required": ["turn", *fields],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["turns"],
        "additionalProperties": False,
    }


def dimension_ratings(answer: JSONObject) -> dict[str, int]:
    return {
        name: as_int(d["rating"], f"dimensions.{name}.rating")
        for name, d in dimension_entries(answer).items()
    }


def dimension_entries(answer: JSONObject) -> dict[str, JSONObject]:
    """``{NAME: {"rating": ..., "evidence": ...}}`` of a ``dimensions_schema`` answer."""
    dimensions = as_object(answer["dimensions"], "dimensions")
    return {name: as_object(d, f"dimensions.{name}") for name, d in dimensions.items()}


def dimensions_score(rating: float, answer: JSONObject, *, list_flagged: bool = False) -> Score:
    """The score of a ``dimensions_schema`` answer whose overall 1-3 ``rating`` is already
    computed: normalised (r - 1) / 2, passing at >= 0.5, with each dimension's rating and
    evidence; ``list_flagged`` adds the dimensions rated below the top."""
    normalised = normalise_rating(int(rating))
    ratings = dimension_ratings(answer)
    details: dict[str, JSONReadValue] = {"rating": int(rating), "dimensions": ratings}
    if list_flagged:
        details["flagged"] = sorted(name for name, r in ratings.items() if r < RATING_MAX)
    dims = dimension_entries(answer)
    details["evidence"] = {name: str(d["evidence"]) for name, d in dims.items()}
    return Score(value=normalised, passed=passes(normalised), details=details)


def turn_items(answer: JSONObject, expected: list[int]) -> dict[int, JSONObject]:
    """The judge's per-turn items keyed by turn; exactly the ``expected`` turns, once each."""
    items: dict[int, JSONObject] = {}
    for item in as_objects(answer["turns"], "turns"):
        turn = as_int(item["turn"], "turns.turn")
        if turn in items:
            raise JudgeOutputError(f"turn {turn} is rated twice")
        items[turn] = item
    if sorted(items) != sorted(expected):
        raise JudgeOutputError(f"rate exactly the agent turns {expected}, got {sorted(items)}")
    return items


# Seeds of repeat r start at r * stride: a grading's retries use seed + attempt, so repeats never
# share a seed (nor a cached answer) while attempts stay below the stride.
REPEAT_SEED_STRIDE = 100


def run_judge(
    judge: Judge,
    template: RatedTemplate,
    variables: JudgeVariables,
    build: Callable[[float, JSONObject], Score],
    facts: Mapping[str, JSONReadValue],
    audio: Audio | None = None,
) -> Score:
    """Grade ``judge.repeats`` times and build the score from the first grading's (rating,
    parsed answer); a judge that gave no answer in format on the first grading leaves the
    metric pending. Further gradings only add ``judge_repeat_values`` (the value of each
    grading that answered in format, the first included) for the variance decomposition;
    the accounting covers every call. ``audio`` goes to an audio judge with the prompt."""
    results: list[JudgeResult] = [
        judge.grade(template, variables, audio=audio, seed=r * REPEAT_SEED_STRIDE)
        for r in range(judge.repeats)
    ]
    first = results[0]
    bookkeeping: dict[str, JSONReadValue] = {
        **facts,
        **summed_accounting(results),
        "judge": judge.identity(),
    }
    if first.value is None or not isinstance(first.parsed, dict):
        return Score.pending_retry(
            f"{template.name}: {first.error or 'no answer'}", **bookkeeping, raw=list(first.raw)
        )
    score = build(first.value, first.parsed)
    if judge.repeats > 1:
        repeats = [
            build(r.value, r.parsed).value
            for r in results
            if r.value is not None and isinstance(r.parsed, dict)
        ]
        bookkeeping["judge_repeat_values"] = [v for v in repeats if v is not None]
        bookkeeping["judge_repeat_failures"] = len(results) - len(repeats)
    return Score(
        value=score.value,
        passed=score.passed,
        details={**score.details, **bookkeeping},
        error=score.error,
    )
