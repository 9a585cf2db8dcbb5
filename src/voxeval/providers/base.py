"""Small protocols every model component implements, and the values they exchange.

Providers are synchronous and thread-safe: the runner gets concurrency from threads with a
per-endpoint limit, and the call engine drives them on a virtual clock. Heavy imports happen
inside constructors so that importing ``voxeval.providers`` stays fast.

Every member a caller uses is declared here: the kind's protocol (``ASR``, ``LLM``, ``VAD``
...) for typing, and a base class (``ProviderBase``, ``LLMBase``, ``VADBase``) that built-in
and plugin providers inherit for the optional members' defaults (docs/extending.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TypeAlias, runtime_checkable

import numpy as np
import numpy.typing as npt

from voxeval.audio import Audio
from voxeval.audio.speech_segments import SpeechSegment
from voxeval.json_types import JSONObject, JSONReadObject, JSONScalar, JSONValue

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


FrameProbabilities: TypeAlias = tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]
"""(frame start times in seconds, speech probability of each frame) from a frame-scoring VAD."""

VAD_STREAM_RATE = 16000
"""The sample rate a VAD stream expects unless told otherwise (Silero scores 16 kHz)."""


class ProviderClass(Protocol):
    """What a registered provider class declares, asked before any instance exists (the
    registry holds classes); ``ProviderBase`` gives the defaults."""

    @property
    def refused_as_judge(self) -> str | None:
        """Why this provider must never judge (a tiny baseline model), or None."""
        ...

    def availability(self, **options: JSONValue) -> Availability:
        """Can the provider run here with these config options (a classmethod)? Checked
        before the constructor; never sends a request (doctor stays offline and fast)."""
        ...


class Provider(Protocol):
    """What every provider instance declares, whatever its kind; ``ProviderBase`` gives the
    defaults of the optional members."""

    @property
    def name(self) -> str:
        """The registry name (read-only here, so wrappers may compute it)."""
        ...

    @property
    def model(self) -> str | None:
        """The remote model it calls (the price-table key), None for an embedded model."""
        ...

    def identity(self) -> JSONObject:
        """Everything that changes outputs (model id/version/file hash, fixed options).
        Used for cache keys and provenance; never contains secrets."""
        ...

    def stats(self) -> dict[str, float] | None:
        """Cumulative HTTP counters (requests, retries, timeouts ...) of a remote provider;
        None for a provider that sends no requests."""
        ...


def option_text(options: dict[str, JSONValue], key: str) -> str | None:
    """A text option of a provider config (``availability``'s ``options``) as text, None
    when unset: config values arrive as JSON, so a number names a model as its digits."""
    value = options.get(key)
    return None if value is None else str(value)


class ProviderBase:
    """The defaults of the optional members of ``ProviderClass`` and ``Provider``: every
    provider class inherits it (or a kind's base below). A subclass sets ``name``, defines
    ``identity`` and its kind's methods, and overrides a default where it differs."""

    refused_as_judge: ClassVar[str | None] = None
    model: str | None = None

    @classmethod
    def availability(cls, **options: JSONValue) -> Availability:
        """Available: a provider without requirements beyond its constructor."""
        return Availability(True)

    def stats(self) -> dict[str, float] | None:
        """None: sends no HTTP requests."""
        return None


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

    def forget_chat(
        self,
        messages: list[Message],
        *,
        tools: list[JSONObject] | None = None,
        response_schema: JSONReadObject | None = None,
        temperature: float = 0.0,
        seed: int | None = None,
        max_tokens: int | None = None,
    ) -> bool:
        """Drop a stored answer of ``chat`` with these arguments (an LLM that keeps answers:
        the call cache), so a rejected answer is asked again; True when one was dropped."""
        ...


class LLMBase(ProviderBase):
    """``ProviderBase`` plus the LLM's optional member: ``forget_chat`` keeps nothing."""

    def forget_chat(
        self,
        messages: list[Message],
        *,
        tools: list[JSONObject] | None = None,
        response_schema: JSONReadObject | None = None,
        temperature: float = 0.0,
        seed: int | None = None,
        max_tokens: int | None = None,
    ) -> bool:
        """False: this LLM keeps no answers, so there is nothing to drop."""
        return False


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
class AsyncASR(Protocol):
    """An ASR's native coroutine twin of ``transcribe`` (a remote endpoint has one): an
    asyncio task awaits it instead of holding a thread while the server works. Checked with
    ``isinstance`` (``providers.runtime.async_dispatch``); a provider without it runs its
    blocking method in a thread."""

    async def atranscribe(
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
class AsyncTTS(Protocol):
    """A TTS's native coroutine twin of ``synthesize`` (see ``AsyncASR``)."""

    async def asynthesize(self, text: str, *, voice: str | None = None) -> Audio: ...


@runtime_checkable
class AsyncLLM(Protocol):
    """An LLM's native coroutine twin of ``chat`` (see ``AsyncASR``)."""

    async def achat(
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
class MOS(Provider, Protocol):
    def predict(self, audio: Audio) -> MOSResult: ...


class VADStream(Protocol):
    """Incremental speech scoring of live audio that arrives in pieces (``VAD.open_stream``)."""

    def push(self, samples: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """Add samples; the speech probability of each window they complete (maybe none)."""
        ...


@runtime_checkable
class VAD(Provider, Protocol):
    def segments(self, audio: Audio) -> list[SpeechSegment]: ...

    def speech_probabilities(self, audio: Audio) -> FrameProbabilities | None:
        """Raw per-frame speech probabilities (they keep short pauses visible to turn
        detection); None for a VAD that only gives ``segments``."""
        ...

    @property
    def streams(self) -> bool:
        """Can it score live audio (``open_stream``)? A simulated call's adapted agent needs
        one that can."""
        ...

    @property
    def threshold(self) -> float:
        """The speech probability at and above which a frame counts as speech."""
        ...

    def open_stream(self, rate: int = VAD_STREAM_RATE) -> VADStream:
        """A new stream for audio arriving at ``rate`` Hz (only when ``streams``)."""
        ...


class VADBase(ProviderBase):
    """``ProviderBase`` plus the VAD's optional members: segments only, no streaming, speech
    at probability 0.5."""

    streams: ClassVar[bool] = False
    threshold: float = 0.5

    def speech_probabilities(self, audio: Audio) -> FrameProbabilities | None:
        """None: this VAD gives segments only."""
        return None

    def open_stream(self, rate: int = VAD_STREAM_RATE) -> VADStream:
        raise TypeError(f"{type(self).__name__} cannot stream (its class sets streams = False)")


class ForwardsVADMembers:
    """For a wrapper around a VAD (call cache, usage meter): frame probabilities and live
    streams go to the wrapped provider unchanged; only ``segments`` is the wrapper's own
    (cached or metered). They are model calls of no price of their own, and a stream's frames
    must reach the live provider."""

    inner: VAD

    def speech_probabilities(self, audio: Audio) -> FrameProbabilities | None:
        return self.inner.speech_probabilities(audio)

    @property
    def streams(self) -> bool:
        return self.inner.streams

    @property
    def threshold(self) -> float:
        return self.inner.threshold

    def open_stream(self, rate: int = VAD_STREAM_RATE) -> VADStream:
        return self.inner.open_stream(rate)
