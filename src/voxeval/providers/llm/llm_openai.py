"""Chat completions from any OpenAI-compatible server (OpenAI, vLLM, Ollama, llama.cpp server).

Structured output: a ``response_schema`` is sent as ``response_format: json_schema`` (or, for
servers without it, as ``json_object`` or as a prompt instruction — option ``json_mode``), the
reply is parsed and validated with jsonschema, and a bad reply is retried with a correction.
"""

from __future__ import annotations

import asyncio
import os
import re
import time
from typing import Any, Literal, Unpack

from voxeval.audio import Audio
from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject, JSONReadObject, JSONValue
from voxeval.providers.base import (
    Availability,
    ChatResponse,
    LLMBase,
    Message,
    Usage,
    option_text,
)
from voxeval.providers.http.openai_http import (
    EndpointOptions,
    EndpointStats,
    MalformedReply,
    open_endpoint,
)
from voxeval.providers.llm.llm_output import (
    chat_with_schema,
    parse_tool_calls,
    with_schema_instruction,
)
from voxeval.providers.provider_kinds import LLM_PROVIDERS

JsonMode = Literal["json_schema", "json_object", "prompt"]


class OpenAIChatOptions(EndpointOptions, total=False):
    """The options of ``OpenAIChat`` (for subclasses that pass them on unchanged)."""

    base_url: str | None
    model: str | None
    api_key_env: str | None
    price_per_1k_input: float | None
    price_per_1k_output: float | None
    extra_body: dict[str, Any] | None
    json_mode: JsonMode
    schema_retries: int
    strict_schema: bool


JSON_MODES: tuple[str, ...] = ("json_schema", "json_object", "prompt")


def openai_availability(
    base_url: str | None, model: str | None, api_key_env: str | None
) -> Availability:
    """Config-only check (no network): endpoint and model named, key variable set if named."""
    if not base_url:
        return Availability(False, "no base_url configured (e.g. base_url: http://host:8000/v1)")
    if not model:
        return Availability(False, f"no model configured for {base_url}")
    if api_key_env and not os.environ.get(api_key_env):
        return Availability(False, f"environment variable {api_key_env} (api_key_env) is not set")
    return Availability(True)


@LLM_PROVIDERS.register("openai")
class OpenAIChat(LLMBase):
    """An LLM behind ``POST {base_url}/chat/completions``; synchronous and thread-safe."""

    name = "openai"

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key_env: str | None = None,
        price_per_1k_input: float | None = None,
        price_per_1k_output: float | None = None,
        extra_body: dict[str, Any] | None = None,
        json_mode: JsonMode = "json_schema",
        schema_retries: int = 2,
        strict_schema: bool = False,
        **endpoint: Unpack[EndpointOptions],
    ) -> None:
        if not base_url or not model:
            raise ConfigError(f"{self.name} provider needs base_url and model")
        if json_mode not in JSON_MODES:
            raise ConfigError(
                f"json_mode must be one of {', '.join(JSON_MODES)}, got {json_mode!r}"
            )
        self.model = model
        self.json_mode = json_mode
        self.schema_retries = int(schema_retries)
        self.strict_schema = bool(strict_schema)
        self.extra_body = dict(extra_body or {})
        self.price_per_1k_input = price_per_1k_input
        self.price_per_1k_output = price_per_1k_output
        self.endpoint = open_endpoint(base_url, api_key_env, endpoint, model)
        self._counters = EndpointStats()

    @classmethod
    def availability(cls, **options: JSONValue) -> Availability:
        return openai_availability(
            option_text(options, "base_url"),
            option_text(options, "model"),
            option_text(options, "api_key_env"),
        )

    def identity(self) -> JSONObject:
        # Only what changes replies: no key, no timeouts/retry/concurrency settings.
        return {
            "provider": self.name,
            "base_url": self.endpoint.base_url,
            "model": self.model,
            "json_mode": self.json_mode,
            "strict_schema": self.strict_schema,
            "schema_retries": self.schema_retries,
            "extra_body": self.extra_body,
        }

    def ping(self) -> Availability:
        return self.endpoint.ping()

    def close(self) -> None:
        self.endpoint.close()

    def stats(self) -> dict[str, float]:
        """Cumulative calls, HTTP requests, retries, tokens and cost since construction."""
        return {
            "calls": 0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "cost_usd": 0.0,
            "schema_retries": 0,
            "requests": 0,
            "retries": 0,
            "timeouts": 0,
            **self.endpoint.stats.snapshot(),
            **self._counters.snapshot(),
        }

    def chat(
        self,
        messages: list[Message],
        *,
        tools: list[JSONObject] | None = None,
        response_schema: JSONReadObject | None = None,
        temperature: float = 0.0,
        seed: int | None = None,
        max_tokens: int | None = None,
    ) -> ChatResponse:
        body = self._base_body(tools, temperature, seed, max_tokens)
        return self._chat(messages, body, response_schema)

    async def achat(
        self,
        messages: list[Message],
        *,
        tools: list[JSONObject] | None = None,
        response_schema: JSONReadObject | None = None,
        temperature: float = 0.0,
        seed: int | None = None,
        max_tokens: int | None = None,
    ) -> ChatResponse:
        """``chat`` from an asyncio task. A free-form reply waits on the server without a
        thread; a reply held to a schema (judges, retried on a bad parse) runs ``chat`` in
        a worker thread."""
        if response_schema is not None:
            return await asyncio.to_thread(
                self.chat,
                messages,
                tools=tools,
                response_schema=response_schema,
                temperature=temperature,
                seed=seed,
                max_tokens=max_tokens,
            )
        self._counters.add(calls=1)
        body = self._base_body(tools, temperature, seed, max_tokens)
        body["messages"] = messages
        started = time.perf_counter()
        data = await self.endpoint.apost_json(
            "/chat/completions", body, check=_has_message, tokens=estimate_tokens(body)
        )
        return self._response(data, time.perf_counter() - started)

    def _chat(
        self, messages: list[Message], body: dict[str, Any], schema: JSONReadObject | None
    ) -> ChatResponse:
        self._counters.add(calls=1)
        if schema is not None:
            if self.json_mode == "json_schema":
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {
                        "name": _schema_name(schema),
                        "schema": schema,
                        "strict": self.strict_schema,
                    },
                }
            else:
                messages = with_schema_instruction(messages, schema)
                if self.json_mode == "json_object":
                    body["response_format"] = {"type": "json_object"}

        def attempt(history: list[Message]) -> ChatResponse:
            return self._complete({**body, "messages": history})

        return chat_with_schema(
            attempt,
            messages,
            schema,
            retries=self.schema_retries,
            where=f"{self.endpoint.base_url} model {self.model}",
            on_retry=lambda: self._counters.add(schema_retries=1),
        )

    def _base_body(
        self,
        tools: list[JSONObject] | None,
        temperature: float,
        seed: int | None,
        max_tokens: int | None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "temperature": temperature}
        if seed is not None:
            body["seed"] = seed
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if tools:
            body["tools"] = tools
        body.update(self.extra_body)
        return body

    def _complete(self, body: dict[str, Any]) -> ChatResponse:
        started = time.perf_counter()
        data = self.endpoint.post_json(
            "/chat/completions", body, check=_has_message, tokens=estimate_tokens(body)
        )
        return self._response(data, time.perf_counter() - started)

    def _response(self, data: dict[str, Any], latency: float) -> ChatResponse:
        message = data["choices"][0]["message"]
        usage = self._usage(data.get("usage"))
        text, audio = self._decode_choices(data["choices"])
        return ChatResponse(
            text=text,
            tool_calls=parse_tool_calls(message.get("tool_calls")),
            usage=usage,
            model=str(data.get("model") or self.model),
            audio=audio,
            latency_s=latency,
        )

    def _decode_choices(self, choices: list[JSONValue]) -> tuple[str, Audio | None]:
        """(text, audio) of a reply: the text of ``choices[0]``; audio-capable subclasses
        decode speech, which some servers put in a later choice."""
        first = choices[0]
        message = first.get("message") if isinstance(first, dict) else None
        if not isinstance(message, dict):  # ``_has_message`` retried such replies already
            raise MalformedReply("reply has no choices[0].message")
        return str(message.get("content") or ""), None

    def _usage(self, raw: Any) -> Usage:
        if not isinstance(raw, dict):
            # Some servers omit usage; an unknown cost stays None rather than a made-up 0.
            self._counters.add(replies_without_usage=1)
            return Usage()
        prompt = int(raw.get("prompt_tokens") or 0)
        completion = int(raw.get("completion_tokens") or 0)
        cost = None
        if self.price_per_1k_input is not None or self.price_per_1k_output is not None:
            cost = (prompt * (self.price_per_1k_input or 0.0)) / 1000 + (
                completion * (self.price_per_1k_output or 0.0)
            ) / 1000
            self._counters.add(cost_usd=cost)
        self._counters.add(prompt_tokens=prompt, completion_tokens=completion)
        return Usage(
            prompt,
            completion,
            cost,
            _audio_tokens(raw.get("prompt_tokens_details")),
            _audio_tokens(raw.get("completion_tokens_details")),
        )


def _audio_tokens(details: JSONValue) -> int:
    """``audio_tokens`` of a ``*_tokens_details`` object (0 when the server gives none)."""
    if not isinstance(details, dict):
        return 0
    count = details.get("audio_tokens") or 0
    if not isinstance(count, int | float | str):  # a list or object: int() would fail
        return 0
    try:
        return int(count)
    except ValueError:
        return 0


def estimate_tokens(body: dict[str, Any]) -> int:
    """A rough token count of a chat request before it is sent (for ``tokens_per_minute``):
    about four characters a token for the messages, plus the reply's ``max_tokens`` (256
    when unset); the limiter corrects it by the reply's reported usage."""
    chars = sum(len(str(m.get("content") or "")) for m in body.get("messages") or ())
    return chars // 4 + int(body.get("max_tokens") or 256)


def _has_message(data: JSONObject) -> None:
    """A completion must carry ``choices[0].message``; without it the reply is retried."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise MalformedReply("no choices in the reply")
    first = choices[0]
    if not isinstance(first, dict) or not isinstance(first.get("message"), dict):
        raise MalformedReply("reply has no choices[0].message")


_NAME_RE = re.compile(r"[^a-zA-Z0-9_-]+")


def _schema_name(schema: JSONReadObject) -> str:
    """OpenAI wants a name matching ^[a-zA-Z0-9_-]{1,64}$ for every json_schema."""
    title = str(schema.get("title") or "response")
    return (_NAME_RE.sub("_", title).strip("_") or "response")[:64]
