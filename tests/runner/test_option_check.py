"""Option check of the shared endpoint options (``EndpointOptions``) of the OpenAI-compatible
providers: declared once, still checked by name and type at plan time, still passed on."""

from __future__ import annotations

import inspect
import typing
from typing import Any, TypedDict, Unpack

import pytest

from voxeval.providers.asr.asr_openai import OpenAITranscriptionASR
from voxeval.providers.http.openai_http import DEFAULT_TIMEOUT_S, EndpointOptions, HTTPEndpoint
from voxeval.providers.llm.audio_llm_openai import OpenAIAudioChat
from voxeval.providers.llm.llm_openai import OpenAIChat
from voxeval.providers.tts.tts_openai import OpenAISpeechTTS
from voxeval.runner.option_check import option_problems, provider_problems

PROVIDERS = {"llm": OpenAIChat, "audio_llm": OpenAIAudioChat, "asr": OpenAITranscriptionASR}
PROVIDERS["tts"] = OpenAISpeechTTS
BASE = {"base_url": "http://127.0.0.1:9/v1", "model": "m"}


def test_endpoint_options_are_the_endpoints_own_keywords() -> None:
    own = set(inspect.signature(HTTPEndpoint).parameters) - {"base_url", "api_key_env"}
    assert set(typing.get_type_hints(EndpointOptions)) == own


@pytest.mark.parametrize("kind", sorted(PROVIDERS))
def test_misspelt_retry_option_is_refused_by_name(kind: str) -> None:
    problems = option_problems(PROVIDERS[kind], {**BASE, "max_retris": 2})
    assert len(problems) == 1
    assert problems[0].startswith("max_retris: unknown option (options: ")
    assert "max_retries" in problems[0] and "backoff_seed" in problems[0]


@pytest.mark.parametrize("kind", sorted(PROVIDERS))
def test_ill_typed_retry_options_are_refused_by_name(kind: str) -> None:
    problems = option_problems(
        PROVIDERS[kind], {**BASE, "backoff_base_s": "fast", "max_concurrency": "many"}
    )
    assert [line.split(":")[0] for line in problems] == ["backoff_base_s", "max_concurrency"]


@pytest.mark.parametrize("kind", sorted(PROVIDERS))
def test_valid_retry_options_are_accepted(kind: str) -> None:
    options = {
        "timeout_s": 5,
        "max_retries": 0,
        "backoff_base_s": 0.1,
        "backoff_max_s": 2,
        "retry_after_max_s": 10,
        "backoff_seed": 3,
        "max_concurrency": 2,
    }
    assert option_problems(PROVIDERS[kind], {**BASE, **options}) == []
    assert provider_problems(kind, {"provider": "openai", **BASE, **options}) == []


def test_provider_spec_with_misspelt_retry_option_names_the_provider() -> None:
    problems = provider_problems("asr", {"provider": "openai", **BASE, "backof_seed": 1})
    assert problems[0].startswith("asr provider 'openai': backof_seed: unknown option")


@pytest.mark.parametrize("kind", sorted(PROVIDERS))
def test_retry_options_reach_the_endpoint(kind: str) -> None:
    provider = PROVIDERS[kind](
        **BASE, timeout_s=7, max_retries=1, backoff_base_s=0.2, max_concurrency=3
    )
    endpoint: HTTPEndpoint = getattr(provider, "http", None) or provider.endpoint
    assert (endpoint.timeout_s, endpoint.max_retries) == (7.0, 1)
    assert (endpoint.backoff_base_s, endpoint.max_concurrency) == (0.2, 3)
    assert endpoint.backoff_max_s == 30.0 and endpoint.retry_after_max_s == 120.0


@pytest.mark.parametrize("cls", [OpenAITranscriptionASR, OpenAISpeechTTS])
def test_older_timeout_spelling_still_works_and_timeout_s_wins(cls: Any) -> None:
    assert cls(**BASE).http.timeout_s == DEFAULT_TIMEOUT_S
    assert cls(**BASE, timeout=9).http.timeout_s == 9.0
    assert cls(**BASE, timeout=9, timeout_s=4).http.timeout_s == 4.0


class Knobs(TypedDict, total=False):
    depth: int


class Component:
    def __init__(self, name: str = "x", **knobs: Unpack[Knobs]) -> None:
        self.knobs = knobs


def test_unpacked_typed_dict_options_are_checked_for_any_component() -> None:
    assert option_problems(Component, {"depth": 2}) == []
    assert option_problems(Component, {"depth": "deep"})[0].startswith("depth: ")
    assert option_problems(Component, {"width": 2})[0].startswith("width: unknown option")
