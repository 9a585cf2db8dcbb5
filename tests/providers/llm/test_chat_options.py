"""``OpenAIChatOptions`` (what ``OpenAIAudioChat`` passes on to ``OpenAIChat``) lists exactly
``OpenAIChat``'s options: an option added to one and not the other would be refused by the
plan check for audio chat models."""

from __future__ import annotations

import inspect
import typing

from voxeval.providers.http.openai_http import EndpointOptions
from voxeval.providers.llm.audio_llm_openai import OpenAIAudioChat
from voxeval.providers.llm.llm_openai import OpenAIChat, OpenAIChatOptions
from voxeval.runner.option_check import option_problems


def test_the_options_typed_dict_matches_the_chat_constructor() -> None:
    params = inspect.signature(OpenAIChat.__init__).parameters.values()
    named = {p.name for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}
    named |= {p.name for p in params if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD}
    named.discard("self")
    expected = named | set(typing.get_type_hints(EndpointOptions))
    assert set(typing.get_type_hints(OpenAIChatOptions)) == expected


def test_audio_chat_options_are_checked_by_type_and_name() -> None:
    problems = option_problems(
        OpenAIAudioChat,
        {"base_url": "http://127.0.0.1:9/v1", "model": "m", "schema_retries": "x", "bogus": 1},
    )
    assert [line.split(":")[0] for line in problems] == ["schema_retries", "bogus"]
    ok = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "json_mode": "prompt"}
    assert option_problems(OpenAIAudioChat, {**ok, "output_audio": True, "max_retries": 1}) == []
