"""Reusable LLM-judge machinery: prompt templates, text or audio input, strict output parsing
(a final ``Score: N`` line, or JSON validated against a schema) and retries on malformed output.

Every protocol's judged metric goes through ``Judge.grade``; the ``JudgeResult`` it returns
carries the raw outputs, the number of calls, parse failures and cost, so that reports can
show how reliable the judge was, not only what it said.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias, TypedDict

import jsonschema

from voxeval.audio import Audio, audio_to_wav_bytes
from voxeval.errors import LLMOutputError, VoxevalError
from voxeval.json_types import JSONObject, JSONReadValue, JSONValue
from voxeval.providers.base import LLM, Message
from voxeval.providers.http.openai_http import RequestCounts, count_requests
from voxeval.providers.llm.llm_output import without_schema_retries

OutputFormat = Literal["score_line", "json"]
Modality = Literal["text", "audio"]
# what a template's ``str.format`` placeholders are filled with
JudgeVariables = Mapping[str, JSONReadValue]

# Last non-empty line, e.g. "Score: 7", "**Score: 7**", "Score: [7]"; nothing else on it.
_SCORE_LINE = re.compile(r"^\**\s*score\s*:\s*\[?\s*(\d+(?:\.\d+)?)\s*\]?\s*\**\s*$", re.I)


# Added to every judge seed inside ``judge_seed_offset``: a regenerated attempt whose recording
# equals an earlier one's must get a verdict of its own, not the earlier one's from the cache.
_seed_offset: ContextVar[int] = ContextVar("judge_seed_offset", default=0)


@contextmanager
def judge_seed_offset(offset: int) -> Iterator[None]:
    """Judge calls made inside are seeded ``offset`` away from the same calls outside (so
    the call cache, keyed by seed, never answers them with another attempt's verdict)."""
    token = _seed_offset.set(offset)
    try:
        yield
    finally:
        _seed_offset.reset(token)


class JudgeOutputError(ValueError):
    """The judge's answer does not follow the required format."""


@dataclass(frozen=True)
class JudgeTemplate:
    """A judge prompt. ``user`` (and ``system``) are ``str.format`` templates; variables are
    substituted as plain text, so braces inside checklists or replies are safe.

    ``output="score_line"`` expects the answer's last line to be ``Score: N``;
    ``output="json"`` sends ``schema`` as the response format and reads ``score_field``.
    """

    name: str
    system: str
    user: str
    output: OutputFormat = "score_line"
    min_score: float = 1
    max_score: float = 10
    integer: bool = True
    schema: dict[str, Any] | None = None
    score_field: str = "score"

    def render(self, variables: JudgeVariables) -> tuple[str, str]:
        try:
            return self.system.format(**variables), self.user.format(**variables)
        except KeyError as exc:
            raise VoxevalError(f"judge template {self.name!r} needs variable {exc}") from exc

    def parse(self, text: str, parsed: JSONValue = None) -> tuple[float, JSONObject | None]:
        """The score in ``text`` (and the parsed JSON object, if any); raises JudgeOutputError."""
        if self.output == "json":
            obj = parsed if parsed is not None else _load_json(text)
            if self.schema is not None:
                try:
                    jsonschema.validate(obj, self.schema)
                except jsonschema.ValidationError as exc:
                    raise JudgeOutputError(
                        f"JSON does not match the schema: {exc.message}"
                    ) from exc
            if not isinstance(obj, dict) or self.score_field not in obj:
                raise JudgeOutputError(f"JSON has no {self.score_field!r} field")
            return self._check(obj[self.score_field]), obj
        return self._check(parse_score_line(text)), None

    def _check(self, value: JSONValue) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise JudgeOutputError(f"score {value!r} is not a number")
        if self.integer and float(value) != int(value):
            raise JudgeOutputError(f"score {value} is not a whole number")
        if not self.min_score <= float(value) <= self.max_score:
            raise JudgeOutputError(
                f"score {value} is outside {self.min_score:g}-{self.max_score:g}"
            )
        return float(value)


def parse_score_line(text: str) -> float:
    """The number on the final ``Score: N`` line; the line must be the last non-empty one."""
    lines = [line.strip() for line in (text or "").strip().splitlines() if line.strip()]
    if not lines:
        raise JudgeOutputError("empty answer")
    match = _SCORE_LINE.match(lines[-1])
    if match is None:
        raise JudgeOutputError(f"last line is not 'Score: N': {lines[-1][:80]!r}")
    return float(match.group(1))


def _load_json(text: str) -> JSONValue:
    body = (text or "").strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", body, re.S)
    if fenced:
        body = fenced.group(1)
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        raise JudgeOutputError(f"answer is not JSON ({exc.msg})") from exc


# judge bookkeeping: call, request and token counts, and ``cost_usd`` (None: not reported)
JudgeAccounting: TypeAlias = dict[str, int | float | None]


class _ChatOptions(TypedDict):
    """The options of one judge call, as ``LLM.chat`` (and a cache's ``forget_chat``) take them."""

    response_schema: dict[str, Any] | None
    temperature: float
    seed: int
    max_tokens: int | None


@dataclass(frozen=True)
class JudgeResult:
    """``value`` is None when every attempt was malformed (``error`` says why)."""

    value: float | None
    raw: tuple[str, ...]
    attempts: int
    parse_failures: int
    parsed: JSONObject | None = None
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    details: dict[str, Any] = field(default_factory=dict)
    # HTTP requests the calls sent (retries included; a cached answer sends none)
    http: RequestCounts = field(default_factory=RequestCounts)

    def accounting(self) -> JudgeAccounting:
        """The bookkeeping fields every judged score carries in its details: ``judge_calls``
        are logical calls, ``judge_requests`` the HTTP requests they sent."""
        return {
            "judge_calls": self.attempts,
            "judge_requests": self.http.requests,
            "judge_retries": self.http.retries,
            "judge_timeouts": self.http.timeouts,
            "parse_failures": self.parse_failures,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": self.cost_usd,
        }


def summed_accounting(results: Iterable[JudgeResult]) -> JudgeAccounting:
    """The judge bookkeeping of several calls added up (the fields of
    ``JudgeResult.accounting``); ``cost_usd`` stays None when no call reported a cost."""
    done = list(results)
    costs = [r.cost_usd for r in done if r.cost_usd is not None]
    return {
        "judge_calls": sum(r.attempts for r in done),
        "judge_requests": sum(r.http.requests for r in done),
        "judge_retries": sum(r.http.retries for r in done),
        "judge_timeouts": sum(r.http.timeouts for r in done),
        "parse_failures": sum(r.parse_failures for r in done),
        "prompt_tokens": sum(r.prompt_tokens for r in done),
        "completion_tokens": sum(r.completion_tokens for r in done),
        "cost_usd": sum(costs, 0.0) if costs else None,
    }


_RETRY_NOTE = (
    "Your previous answer could not be read: {problem}. Answer again, following the required "
    "output format exactly."
)


class Judge:
    """Grades with an LLM (``modality="text"``) or an audio-capable LLM (``"audio"``, the audio
    goes in as an ``input_audio`` part). Malformed answers are retried up to ``max_attempts``
    calls in total; each retry shows the model its previous answer and what was wrong. The
    provider's own retries of bad JSON are off while grading (``without_schema_retries``), so
    ``max_attempts`` bounds the requests per grading (transport retries of a failed request,
    counted in ``judge_retries``, aside) and every malformed answer is a counted parse
    failure.

    ``repeats``: how many independent gradings a metric asks for (``judged_call.run_judge``
    keeps all of them so that judge noise can be measured); ``grade`` itself grades once."""

    def __init__(
        self,
        llm: LLM,
        *,
        modality: Modality = "text",
        max_attempts: int = 3,
        temperature: float = 0.0,
        max_tokens: int | None = 1024,
        repeats: int = 1,
    ) -> None:
        if max_attempts < 1:
            raise VoxevalError("judge max_attempts must be >= 1")
        if repeats < 1:
            raise VoxevalError("judge repeats must be >= 1")
        self.llm = llm
        self.modality = modality
        self.max_attempts = max_attempts
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.repeats = repeats

    def identity(self) -> JSONObject:
        found: JSONObject = {
            "llm": self.llm.identity(),
            "modality": self.modality,
            "max_attempts": self.max_attempts,
            "temperature": self.temperature,
        }
        return found if self.repeats == 1 else {**found, "repeats": self.repeats}

    def _messages(self, system: str, user: str, audio: Audio | None) -> list[Message]:
        content: Any = user
        if self.modality == "audio":
            if audio is None:
                raise VoxevalError("an audio judge needs the audio to grade")
            wav = base64.b64encode(audio_to_wav_bytes(audio)).decode("ascii")
            content = [
                {"type": "text", "text": user},
                {"type": "input_audio", "input_audio": {"data": wav, "format": "wav"}},
            ]
        # an empty system prompt is left out (a reference prompt sent as the reference does)
        head: list[Message] = [{"role": "system", "content": system}] if system else []
        return [*head, {"role": "user", "content": content}]

    def _forget(self, messages: list[Message], options: _ChatOptions) -> None:
        """Keep a rejected answer out of the call cache (when the judge sits behind one): once
        the judge is fixed, a resumed run or ``voxeval score`` must ask it again."""
        self.llm.forget_chat(messages, **options)

    def grade(
        self,
        template: JudgeTemplate,
        variables: JudgeVariables,
        *,
        audio: Audio | None = None,
        seed: int = 0,
    ) -> JudgeResult:
        seed += _seed_offset.get()
        with count_requests() as http, without_schema_retries():
            result = self._grade(template, variables, audio=audio, seed=seed)
        return replace(result, http=http)

    def _grade(
        self,
        template: JudgeTemplate,
        variables: JudgeVariables,
        *,
        audio: Audio | None,
        seed: int,
    ) -> JudgeResult:
        system, user = template.render(variables)
        prompt = self._messages(system, user, audio)
        messages = prompt
        schema = template.schema if template.output == "json" else None
        raw: list[str] = []
        failures = 0
        calls = 0  # provider-internal retries on top of our attempts
        prompt_tokens = completion_tokens = 0
        cost: float | None = None
        problem = ""
        for attempt in range(self.max_attempts):
            # A distinct seed per attempt: a cached malformed answer must not come back.
            options: _ChatOptions = {
                "response_schema": schema,
                "temperature": self.temperature,
                "seed": seed + attempt,
                "max_tokens": self.max_tokens,
            }
            try:
                response = self.llm.chat(messages, **options)
            except LLMOutputError as exc:
                # The provider already retried its JSON output internally: count those calls.
                calls += max(1, exc.attempts) - 1
                failures += max(1, exc.attempts)
                raw.append(exc.raw_text)
                problem = str(exc)
                continue
            raw.append(response.text)
            prompt_tokens += response.usage.prompt_tokens
            completion_tokens += response.usage.completion_tokens
            if response.usage.cost_usd is not None:
                cost = (cost or 0.0) + response.usage.cost_usd
            try:
                value, parsed = template.parse(response.text, response.parsed)
            except JudgeOutputError as exc:
                failures += 1
                problem = str(exc)
                self._forget(messages, options)
                messages = [
                    *prompt,
                    {"role": "assistant", "content": response.text},
                    {"role": "user", "content": _RETRY_NOTE.format(problem=problem)},
                ]
                continue
            return JudgeResult(
                value, tuple(raw), attempt + 1 + calls, failures, parsed, None,
                prompt_tokens, completion_tokens, cost,
            )  # fmt: skip
        return JudgeResult(
            None, tuple(raw), self.max_attempts + calls, failures, None,
            f"judge output malformed after {self.max_attempts} attempts: {problem}",
            prompt_tokens, completion_tokens, cost,
        )  # fmt: skip
