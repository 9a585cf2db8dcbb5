"""Small protocols every model component implements, and the values they exchange.

Providers are synchronous and thread-safe: the runner gets concurrency from threads with a
per-endpoint limit, and the call engine drives them on a virtual clock. Heavy imports happen
inside constructors so that importing ``voxeval.providers`` stays fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias, runtime_checkable

from voxeval.audio import Audio
from voxeval.audio.speech_segments import SpeechSegment
from voxeval.json_types import JSONObject, JSONReadObject, JSONScalar

MessageValue: TypeAlias = "JSONScalar | Audio | list[MessageValue] | dict[str, MessageValue]"
"""A field of a chat message: JSON, or ``Audio`` values in a content list (audio chat)."""
Message: TypeAlias = dict[str, "MessageValue"]
"""A chat message in OpenAI format: {"role": ..., "content": str | list[part], ...}."""


@dataclass(frozen=True)
class Availability:
    """Whether a provider can run on this machine, and why not."""

    available: bool
    reason: str = ""


@dataclass(frozen=True)
class Word:
    text: str
    start: float
    end: float
    probability: float | None = None


@dataclass(frozen=True)
class Transcript:
    text: str
    language: str | None = None
    words: tuple[Word, ...] = ()
    provider: str = ""
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]
    raw_arguments: str = ""  # as sent by the model, kept to judge parameter validity
    # False when raw_arguments is not a JSON object; ``arguments`` is then {}.
    arguments_valid: bool = True


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None  # None when no price is configured for the model
    # audio tokens among the prompt/completion tokens, when the endpoint reports them
    # (OpenAI-compatible ``*_tokens_details.audio_tokens``)
    prompt_audio_tokens: int = 0
    completion_audio_tokens: int = 0


@dataclass(frozen=True)
class ChatResponse:
    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    parsed: Any = None  # the validated JSON object when a response schema was given
    usage: Usage = Usage()
    model: str = ""
    cached: bool = False
    audio: Audio | None = None  # for endpoints that answer with speech
    latency_s: float = 0.0


@dataclass(frozen=True)
class MOSResult:
    """Predicted quality on a 1-5 scale. ``scores`` holds every field the model gives
    (e.g. DNSMOS: sig, bak, ovrl, p808)."""

    overall: float
    scores: dict[str, float]
    model: str
    # How the input was prepared (resampling, padding of short clips, clipping), for reports.
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Voice:
    """A voice in the catalogue, with the metadata benchmarks select on."""

    name: str  # unique, e.g. "piper:joe", "espeak:en-gb-scotland+f3", "flite:slt"
    engine: str
    gender: str  # "male" | "female"
    age: str  # "child" | "adolescent" | "adult" | "senior"
    accent: str  # e.g. "us", "gb", "scottish", "caribbean"
    timbre: str = "default"
    quality: float | None = None  # measured naturalness MOS where known
    details: dict[str, Any] = field(default_factory=dict)
    language: str = "en"  # the language the voice speaks (ISO 639-1)


ProviderResult: TypeAlias = Transcript | ChatResponse | MOSResult | Audio | list[SpeechSegment]
"""Every result type a provider call returns (what the call cache stores and meters read)."""


class Provider(Protocol):
    @property
    def name(self) -> str:
        """The registry name (read-only here, so wrappers may compute it)."""
        ...

    def identity(self) -> JSONObject:
        """Everything that changes outputs (model id/version/file hash, fixed options).
        Used for cache keys and provenance; never contains secrets."""
        ...


@runtime_checkable
class ASR(Provider, Protocol):
    def transcribe(
        self,
        audio: Audio,
        *,
        language: str | None = "en",
        beam_size: int = 1,
        temperature: float = 0.0,
        word_timestamps: bool = False,
        seed: int | None = None,
    ) -> Transcript: ...


@runtime_checkable
class TTS(Provider, Protocol):
    def synthesize(self, text: str, *, voice: str | None = None) -> Audio: ...

    def voices(self) -> list[Voice]: ...


@runtime_checkable
class LLM(Provider, Protocol):
    def chat(
        self,
        messages: list[Message],
        *,
        tools: list[JSONObject] | None = None,
        response_schema: JSONReadObject | None = None,
        temperature: float = 0.0,
        seed: int | None = None,
        max_tokens: int | None = None,
    ) -> ChatResponse: ...


@runtime_checkable
class AudioLLM(LLM, Protocol):
    """A chat model that also hears audio (``Audio`` values or input_audio parts in a message's
    content list) and can answer with speech (``ChatResponse.audio``)."""

    def chat(
        self,
        messages: list[Message],
        *,
        tools: list[JSONObject] | None = None,
        response_schema: JSONReadObject | None = None,
        temperature: float = 0.0,
        seed: int | None = None,
        max_tokens: int | None = None,
        output_audio: bool | None = None,
        voice: str | None = None,
    ) -> ChatResponse: ...


@runtime_checkable
class MOS(Provider, Protocol):
    def predict(self, audio: Audio) -> MOSResult: ...


@runtime_checkable
class VAD(Provider, Protocol):
    def segments(self, audio: Audio) -> list[SpeechSegment]: ...
