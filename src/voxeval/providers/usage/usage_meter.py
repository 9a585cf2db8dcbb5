"""What each model call consumed, by provider kind and model: calls, HTTP requests, tokens
(audio tokens among them) and seconds of audio in and out.

``create_provider`` wraps every provider in a ``Metered*`` wrapper. A call made while a usage
ledger is open on the thread (see ``usage_ledger``) reports a ``ModelUsage`` to the innermost
attributed component, so a unit's usage can be priced per (kind, provider, model) afterwards.
Outside a ledger the wrapper only forwards the call. It sits inside the call cache: a cache
hit runs no model, sends nothing and costs nothing, so it is not metered.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any, Generic, TypeAlias, TypeVar

from voxeval.audio import Audio
from voxeval.json_types import JSONObject, JSONReadObject, JSONScalar
from voxeval.providers.base import (
    ASR,
    LLM,
    MOS,
    TTS,
    VAD,
    AsyncASR,
    AsyncLLM,
    AsyncTTS,
    ChatResponse,
    ForwardsVADMembers,
    Message,
    MOSResult,
    Provider,
    ProviderBase,
    ProviderResult,
    SpeechSegment,
    Transcript,
    Usage,
    Voice,
)
from voxeval.providers.http.openai_http import count_requests


@dataclass
class CallCounts:
    """The counts every usage record starts with: logical calls, HTTP requests, retries and
    timeouts, prompt and completion tokens (subclasses add their amounts after these)."""

    calls: int = 0
    requests: int = 0
    retries: int = 0
    timeouts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class ModelUsage(CallCounts):
    """What calls to one model cost: the amounts a price table multiplies."""

    prompt_audio_tokens: int = 0
    completion_audio_tokens: int = 0
    audio_in_s: float = 0.0
    audio_out_s: float = 0.0

    def add(self, other: ModelUsage) -> None:
        for name in _AMOUNTS:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def add_tokens(self, usage: Usage | None) -> None:
        """Tokens of a provider result's ``usage`` (a ``Usage``), if any."""
        if usage is None:
            return
        for name in (
            "prompt_tokens",
            "completion_tokens",
            "prompt_audio_tokens",
            "completion_audio_tokens",
        ):
            setattr(self, name, getattr(self, name) + int(getattr(usage, name, 0) or 0))


_AMOUNTS = tuple(f.name for f in fields(ModelUsage))  # looked up once, not per call

P = TypeVar("P", bound=Provider, covariant=True)
R = TypeVar("R", bound=ProviderResult)

AudioCarrier: TypeAlias = "Audio | JSONScalar | Mapping[str, AudioCarrier] | Sequence[AudioCarrier]"
"""A call's input as far as audio goes: an ``Audio``, or chat messages (and their parts)
that may hold ``Audio`` values."""

ModelKey = tuple[str, str, str]
"""(kind, provider, model): e.g. ("llm", "openai", "gpt-4o-mini"), ("asr", "whisper-tiny-en",
"whisper-tiny-en")."""

# Set by ``usage_ledger`` (which imports this module): where a finished metered call goes.
# None until then, and a call made while no ledger is open is not kept anywhere.
_sink: Callable[[ModelKey, ModelUsage], None] | None = None


def _never() -> bool:
    return False


_active: Callable[[], bool] = _never


def connect(sink: Callable[[ModelKey, ModelUsage], None], active: Callable[[], bool]) -> None:
    """Route metered calls to ``sink`` while ``active()`` (a ledger is open on the thread)."""
    global _sink, _active
    _sink, _active = sink, active


@contextmanager
def metered_call(key: ModelKey) -> Iterator[ModelUsage]:
    """One call of the model ``key``: the requests sent inside and what the block adds to the
    yielded usage are reported when it ends, also when it raises (requests were sent)."""
    use = ModelUsage(calls=1)
    with count_requests() as tally:
        try:
            yield use
        finally:
            use.requests += int(tally.requests)
            use.retries += int(tally.retries)
            use.timeouts += int(tally.timeouts)
            if _sink is not None:
                _sink(key, use)


def audio_seconds(value: AudioCarrier) -> float:
    """Seconds of audio in ``value`` (an ``Audio``, or messages holding ``Audio`` values)."""
    if isinstance(value, Audio):
        return float(value.duration)
    if isinstance(value, dict):
        return sum(audio_seconds(v) for v in value.values())
    if isinstance(value, list | tuple):
        return sum(audio_seconds(v) for v in value)
    return 0.0


def model_key(kind: str, provider_name: str, provider: Provider) -> ModelKey:
    """The price-table key of a provider: the model it calls (its ``model``, set by every
    remote provider, defaults included), else its registry name (an embedded model)."""
    return (kind, provider_name, provider.model or provider_name)


class MeteredProvider(ProviderBase, Generic[P]):
    """Base of the metering wrappers: the wrapped provider's protocol and attributes. The
    members the provider contract declares are forwarded explicitly; the class-level ones
    (``availability``, ``refused_as_judge``) are asked of the registered class, never of a
    wrapper."""

    method: str = ""  # the metered method of the kind (``transcribe``, ``chat``, ...)

    def __init__(self, inner: P, key: ModelKey) -> None:
        self.inner = inner
        self.usage_key = key
        self.model = inner.model
        # The functions set on the wrapper below run its methods on ``view`` (the inner
        # provider and the key), never on the wrapper itself: a function kept in the
        # wrapper's own attributes that referred back to it would make a reference cycle,
        # and the wrapped model (hundreds of MB) would outlive its last user until the
        # cyclic collector ran.
        view = _MeterView(inner, key)
        own = getattr(type(self), self.method)  # the class's function, not a bound method

        # The metered method carries the inner method's signature (``__wrapped__``): the
        # call cache outside binds arguments and defaults against it for its keys.
        @functools.wraps(getattr(inner, self.method))
        def call(*args: Any, **kwargs: Any) -> Any:
            return own(view, *args, **kwargs)

        setattr(self, self.method, call)
        # The async twin (``achat``, ``atranscribe``, ``asynthesize``) of a provider that has
        # one is what the asyncio runner awaits: metered the same way.
        twin = self.native_twin()
        if twin is not None and inspect.iscoroutinefunction(twin):
            measure = type(self).audio_in  # a static method: no reference to the wrapper

            @functools.wraps(twin)
            async def acall(*args: Any, **kwargs: Any) -> Any:
                if not _active():
                    return await twin(*args, **kwargs)
                with metered_call(key) as use:
                    use.audio_in_s += measure(args)
                    result = await twin(*args, **kwargs)
                    _add_result(use, result)
                    return result

            setattr(self, f"a{self.method}", acall)

    def native_twin(self) -> Callable[..., Awaitable[ProviderResult]] | None:
        """The inner provider's coroutine twin of ``method`` (its kind's ``Async*`` protocol),
        or None: the kind has none, or the provider does not offer it."""
        return None

    @staticmethod
    def audio_in(args: tuple[AudioCarrier, ...]) -> float:
        """Seconds of audio in a call's first argument (none for a TTS's text)."""
        return audio_seconds(args[0]) if args else 0.0

    def __reduce__(self) -> tuple[type[MeteredProvider[P]], tuple[P, ModelKey]]:
        return (type(self), (self.inner, self.usage_key))

    def __getattr__(self, name: str) -> Any:
        if name in ("inner", "usage_key"):  # not yet set (e.g. while unpickling)
            raise AttributeError(name)
        return getattr(self.inner, name)

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        # isinstance() against the wrapped provider's class holds (as for a mock's spec)
        return type(self.inner)

    @property
    def name(self) -> str:
        return self.inner.name

    def identity(self) -> JSONObject:
        result: dict[str, Any] = self.inner.identity()
        return result

    def stats(self) -> dict[str, float] | None:
        return self.inner.stats()

    def _metered(
        self, call: Callable[..., R], args: tuple[Any, ...], kwargs: dict[str, Any], audio_in: float
    ) -> R:
        """``call`` (a method of the inner provider) on the arguments, metered while a ledger
        is open."""
        if not _active():
            return call(*args, **kwargs)
        with metered_call(self.usage_key) as use:
            use.audio_in_s += audio_in
            result = call(*args, **kwargs)
            _add_result(use, result)
            return result


class _MeterView:
    """What a metering wrapper's methods use (its inner provider and price-table key),
    without the wrapper."""

    __slots__ = ("inner", "usage_key")

    def __init__(self, inner: Provider, key: ModelKey) -> None:
        self.inner = inner
        self.usage_key = key

    _metered = MeteredProvider._metered


def _add_result(use: ModelUsage, result: ProviderResult) -> None:
    """Tokens of a chat answer's ``usage`` and seconds of the audio a result carries (a chat
    answer's speech) or is (a TTS's)."""
    if isinstance(result, ChatResponse):
        use.add_tokens(result.usage)
    out = result.audio if isinstance(result, ChatResponse) else result
    if isinstance(out, Audio):
        use.audio_out_s += float(out.duration)


# Each wrapper's method runs with ``self`` a ``_MeterView`` (see ``MeteredProvider``): it
# uses only ``inner`` and ``_metered``. Options pass through unchanged to the provider.
class MeteredASR(MeteredProvider[ASR]):
    method = "transcribe"

    def native_twin(self) -> Callable[..., Awaitable[Transcript]] | None:
        return self.inner.atranscribe if isinstance(self.inner, AsyncASR) else None

    def transcribe(self, audio: Audio, *args: Any, **kwargs: Any) -> Transcript:
        return self._metered(self.inner.transcribe, (audio, *args), kwargs, audio_seconds(audio))


class MeteredTTS(MeteredProvider[TTS]):
    method = "synthesize"

    def native_twin(self) -> Callable[..., Awaitable[Audio]] | None:
        return self.inner.asynthesize if isinstance(self.inner, AsyncTTS) else None

    def synthesize(self, text: str, *args: Any, **kwargs: Any) -> Audio:
        return self._metered(self.inner.synthesize, (text, *args), kwargs, 0.0)

    def voices(self) -> list[Voice]:
        return self.inner.voices()


class MeteredLLM(MeteredProvider[LLM]):
    method = "chat"

    def native_twin(self) -> Callable[..., Awaitable[ChatResponse]] | None:
        return self.inner.achat if isinstance(self.inner, AsyncLLM) else None

    def chat(self, messages: list[Message], *args: Any, **kwargs: Any) -> ChatResponse:
        return self._metered(self.inner.chat, (messages, *args), kwargs, audio_seconds(messages))

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
        return self.inner.forget_chat(
            messages,
            tools=tools,
            response_schema=response_schema,
            temperature=temperature,
            seed=seed,
            max_tokens=max_tokens,
        )


class MeteredMOS(MeteredProvider[MOS]):
    method = "predict"

    def predict(self, audio: Audio, *args: Any, **kwargs: Any) -> MOSResult:
        return self._metered(self.inner.predict, (audio, *args), kwargs, audio_seconds(audio))


class MeteredVAD(ForwardsVADMembers, MeteredProvider[VAD]):
    method = "segments"

    def segments(self, audio: Audio, *args: Any, **kwargs: Any) -> list[SpeechSegment]:
        return self._metered(self.inner.segments, (audio, *args), kwargs, audio_seconds(audio))


_WRAPPERS: dict[str, type[MeteredProvider[Provider]]] = {
    "asr": MeteredASR,
    "tts": MeteredTTS,
    "llm": MeteredLLM,
    "audio_llm": MeteredLLM,
    "mos": MeteredMOS,
    "vad": MeteredVAD,
}


def metered(kind: str, provider: Provider, key: ModelKey) -> Provider:
    """``provider`` with its calls metered under ``key`` (itself for an unknown kind)."""
    wrapper = _WRAPPERS.get(kind)
    if wrapper is None or isinstance(provider, MeteredProvider):
        return provider
    return wrapper(provider, key)
