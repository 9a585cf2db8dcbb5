"""Turning raw chat replies into checked values: JSON against a schema, tool calls, usage.

Shared by every LLM provider (remote and local) so that all of them validate structured
output the same way and retry with the same corrective message.

Under a judge (``without_schema_retries``) the provider sends one request per call and
raises on a bad reply: the judge retries and counts every malformed answer itself, so none
is hidden inside a provider's own retries.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError

from voxeval.errors import ConfigError, LLMOutputError
from voxeval.json_types import JSONReadObject, JSONValue
from voxeval.providers.base import ChatResponse, Message, ToolCall, Usage

_FENCE = "```"


def extract_json(text: str) -> JSONValue:
    """The JSON value in a reply: the whole text, a fenced block, or the first object/array.

    Raises ``ValueError`` saying why nothing could be parsed.
    """
    stripped = text.strip()
    if stripped.startswith(_FENCE):
        body = stripped[len(_FENCE) :]
        body = body.split("\n", 1)[1] if "\n" in body else ""  # drop the ```json tag line
        stripped = body.rsplit(_FENCE, 1)[0].strip()
    if not stripped:
        raise ValueError("the reply is empty")
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as first:
        # Small models often wrap JSON in prose; take the first complete value.
        decoder = json.JSONDecoder()
        for i, ch in enumerate(stripped):
            if ch in "{[":
                try:
                    value, _ = decoder.raw_decode(stripped, i)
                    return value
                except json.JSONDecodeError:
                    continue
        raise ValueError(f"the reply is not JSON ({first.msg} at char {first.pos})") from first


def schema_validator(schema: JSONReadObject) -> jsonschema.protocols.Validator:
    """A validator for ``schema``; a broken schema is a config error, not a model error."""
    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        raise ConfigError(f"response_schema is not a valid JSON schema: {exc.message}") from exc
    validator: jsonschema.protocols.Validator = cls(schema)
    return validator


def schema_problem(value: JSONValue, validator: jsonschema.protocols.Validator) -> str | None:
    """A one-line description of the first schema violation, or None when ``value`` fits."""
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    return f"at {where}: {error.message}"


def schema_instruction(schema: JSONReadObject) -> str:
    """System-prompt text asking for JSON only (for servers without schema-constrained output)."""
    return (
        "Answer with a single JSON value and nothing else (no prose, no code fences). "
        "It must validate against this JSON schema:\n" + json.dumps(schema, sort_keys=True)
    )


def with_schema_instruction(messages: list[Message], schema: JSONReadObject) -> list[Message]:
    """Messages with the JSON instruction added to the leading system message (or a new one).

    Appending instead of adding a second system message: several chat templates reject
    more than one system message or one that is not first.
    """
    text = schema_instruction(schema)
    content = messages[0].get("content") if messages else None
    if messages and messages[0].get("role") == "system" and isinstance(content, str):
        first: Message = {**messages[0], "content": content + "\n\n" + text}
        return [first, *messages[1:]]
    return [{"role": "system", "content": text}, *messages]


def parse_tool_calls(raw: list[dict[str, Any]] | None) -> tuple[ToolCall, ...]:
    """OpenAI ``tool_calls`` into ``ToolCall`` values; bad argument JSON is kept, flagged."""
    calls = []
    for i, item in enumerate(raw or []):
        function = item.get("function") or {}
        raw_args = function.get("arguments")
        if isinstance(raw_args, dict):  # some servers send an object instead of a string
            raw_text = json.dumps(raw_args)
        else:
            raw_text = "" if raw_args is None else str(raw_args)
        arguments: dict[str, Any] = {}
        valid = True
        try:
            parsed = json.loads(raw_text) if raw_text.strip() else {}
            if isinstance(parsed, dict):
                arguments = parsed
            else:
                valid = False
        except json.JSONDecodeError:
            valid = False
        calls.append(
            ToolCall(
                id=str(item.get("id") or f"call_{i}"),
                name=str(function.get("name") or ""),
                arguments=arguments,
                raw_arguments=raw_text,
                arguments_valid=valid,
            )
        )
    return tuple(calls)


def add_usage(a: Usage, b: Usage) -> Usage:
    """Sum of two usages; cost stays None only when neither side knows it."""
    cost = (
        None
        if a.cost_usd is None and b.cost_usd is None
        else (a.cost_usd or 0.0) + (b.cost_usd or 0.0)
    )
    return Usage(
        a.prompt_tokens + b.prompt_tokens,
        a.completion_tokens + b.completion_tokens,
        cost,
        a.prompt_audio_tokens + b.prompt_audio_tokens,
        a.completion_audio_tokens + b.completion_audio_tokens,
    )


_NO_SCHEMA_RETRIES: ContextVar[bool] = ContextVar("voxeval_no_schema_retries", default=False)


@contextmanager
def without_schema_retries() -> Iterator[None]:
    """Inside this block ``chat_with_schema`` makes one attempt whatever the provider's
    ``schema_retries`` (a judge's own retry loop counts each malformed answer)."""
    token = _NO_SCHEMA_RETRIES.set(True)
    try:
        yield
    finally:
        _NO_SCHEMA_RETRIES.reset(token)


def chat_with_schema(
    attempt: Callable[[list[Message]], ChatResponse],
    messages: list[Message],
    schema: JSONReadObject | None,
    *,
    retries: int,
    where: str,
    on_retry: Callable[[], None] | None = None,
) -> ChatResponse:
    """Call ``attempt`` until its text parses and validates against ``schema``.

    After a bad reply the conversation is extended with that reply and a note saying what was
    wrong, which fixes most slips of instruction-following models. Usage sums all attempts.
    Raises ``LLMOutputError`` (with the last raw text) after ``retries + 1`` attempts; inside
    ``without_schema_retries`` after the first.
    """
    if schema is None:
        return attempt(messages)
    if _NO_SCHEMA_RETRIES.get():
        retries = 0
    validator = schema_validator(schema)
    history = list(messages)
    total = Usage()
    latency = 0.0
    problem = ""
    text = ""
    for number in range(1, retries + 2):
        response = attempt(history)
        total = add_usage(total, response.usage)
        latency += response.latency_s
        text = response.text
        try:
            value = extract_json(text)
        except ValueError as exc:
            problem = str(exc)
        else:
            found = schema_problem(value, validator)
            if found is None:
                return replace(response, parsed=value, usage=total, latency_s=latency)
            problem = f"the JSON does not match the schema {found}"
        if number <= retries:
            if on_retry is not None:
                on_retry()
            history = [
                *history,
                {"role": "assistant", "content": text},
                {
                    "role": "user",
                    "content": f"That reply was not usable: {problem}. "
                    "Reply again with only the corrected JSON.",
                },
            ]
    raise LLMOutputError(
        f"{where}: no valid JSON after {retries + 1} attempts; last problem: {problem}",
        raw_text=text,
        attempts=retries + 1,
    )
