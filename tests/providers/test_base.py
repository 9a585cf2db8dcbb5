"""The provider contract (``providers.base``): what a provider class inherits from
``ProviderBase``/``LLMBase``/``VADBase``, and that an override is what the code reading each
member uses (factory, judge refusal, request stats, price keys, turn detection), also through
the cache and meter wrappers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from voxeval import registry
from voxeval.api.context import RunContext
from voxeval.api.provider_pool import judge_refusal
from voxeval.audio import Audio
from voxeval.config import ProviderSpec, RunConfig
from voxeval.errors import ProviderUnavailable
from voxeval.json_types import JSONObject, JSONValue
from voxeval.providers.base import (
    Availability,
    ChatResponse,
    FrameProbabilities,
    LLMBase,
    Message,
    ProviderBase,
    SpeechSegment,
    Transcript,
    VADBase,
    option_text,
)
from voxeval.providers.caching.cache import ProviderCache, cached
from voxeval.providers.factory import availability, create_provider
from voxeval.providers.usage.usage_ledger import sends_requests
from voxeval.providers.usage.usage_meter import metered, model_key
from voxeval.simulation.turn_detection import ProviderVAD
from voxeval.store import RunStore
from voxeval.systems.turn_handling import frame_vad_from

RATE = 16000


class PlainASR(ProviderBase):
    """A plugin ASR that declares only what it must."""

    name = "test-contract-plain"

    def identity(self) -> JSONObject:
        return {"provider": self.name}

    def transcribe(self, audio: Audio, **_: Any) -> Transcript:
        return Transcript(text="plain", provider=self.name)


class RemoteASR(PlainASR):
    """Overrides the optional members: a configured check, a model, HTTP counters."""

    name = "test-contract-remote"
    model = "remote-model-1"

    @classmethod
    def availability(cls, **options: JSONValue) -> Availability:
        if option_text(options, "key_env") is None:
            return Availability(False, "no key_env configured")
        return Availability(True)

    def __init__(self, key_env: str = "") -> None:
        self.key_env = key_env

    def stats(self) -> dict[str, float]:
        return {"requests": 3.0, "retries": 1.0, "timeouts": 0.0}


class CountingLLM(LLMBase):
    name = "test-contract-llm"

    def __init__(self) -> None:
        self.calls = 0

    def identity(self) -> JSONObject:
        return {"provider": self.name}

    def chat(self, messages: list[Message], **_: Any) -> ChatResponse:
        self.calls += 1
        return ChatResponse(text=f"answer {self.calls}")


class TinyLLM(CountingLLM):
    name = "test-contract-tiny"
    refused_as_judge = "answers at chance level"


@pytest.fixture(autouse=True)
def registered() -> Iterator[None]:
    """The test providers are registered while each test runs (and only then)."""
    registry.register("asr", PlainASR.name)(PlainASR)
    registry.register("asr", RemoteASR.name)(RemoteASR)
    registry.register("llm", CountingLLM.name)(CountingLLM)
    registry.register("llm", TinyLLM.name)(TinyLLM)
    yield
    registry._REGISTRY["asr"].pop(PlainASR.name)
    registry._REGISTRY["asr"].pop(RemoteASR.name)
    registry._REGISTRY["llm"].pop(CountingLLM.name)
    registry._REGISTRY["llm"].pop(TinyLLM.name)


def test_a_provider_inheriting_the_base_gets_the_defaults() -> None:
    assert PlainASR.availability() == Availability(True, "")
    assert availability("asr", ProviderSpec(provider=PlainASR.name)) == Availability(True, "")
    assert PlainASR.refused_as_judge is None
    plain = PlainASR()
    assert plain.stats() is None and not sends_requests(plain)
    assert plain.model is None
    assert model_key("asr", "plain", plain) == ("asr", "plain", "plain")  # its registry name


def test_an_availability_override_is_asked_with_the_specs_options() -> None:
    ready = ProviderSpec.model_validate({"provider": RemoteASR.name, "key_env": "KEY"})
    assert availability("asr", ready) == Availability(True, "")
    missing = ProviderSpec(provider=RemoteASR.name)
    assert availability("asr", missing) == Availability(False, "no key_env configured")
    with pytest.raises(ProviderUnavailable, match="no key_env configured"):
        create_provider("asr", missing)


def test_option_text_reads_a_config_value_as_text() -> None:
    assert option_text({"model": "m", "port": 8000, "unset": None}, "model") == "m"
    assert option_text({"port": 8000}, "port") == "8000"
    assert option_text({"unset": None}, "unset") is None
    assert option_text({}, "model") is None


def test_refused_as_judge_is_read_from_the_registered_class() -> None:
    assert judge_refusal("llm", TinyLLM.name) == "answers at chance level"
    assert judge_refusal("llm", CountingLLM.name) is None
    assert judge_refusal("llm", "smollm2") is not None  # the built-in tiny baseline
    assert judge_refusal("llm", "no-such-provider") is None  # the plan check reports it


def test_overridden_model_and_stats_are_used_and_forwarded_by_the_wrappers(
    tmp_path: Path,
) -> None:
    remote = RemoteASR("KEY")
    assert model_key("asr", "remote", remote) == ("asr", "remote", "remote-model-1")
    wrapped = cached("asr", metered("asr", remote, ("asr", "remote", "remote-model-1")), None)
    behind_cache = cached("asr", metered("asr", remote, ("asr", "r", "m")), ProviderCache(tmp_path))
    for provider in (wrapped, behind_cache):
        assert provider.name == "test-contract-remote"
        assert provider.model == "remote-model-1"
        assert provider.stats() == {"requests": 3.0, "retries": 1.0, "timeouts": 0.0}
        assert sends_requests(provider)


def test_request_stats_counts_the_providers_that_keep_stats(tmp_path: Path) -> None:
    config = RunConfig(
        suite="x", systems=[{"name": "s", "type": "cascade"}], cache_dir=str(tmp_path / "c")
    )
    ctx = RunContext(config, RunStore(tmp_path / "run"))
    ctx.provider("asr", PlainASR.name)
    ctx.provider("asr", {"provider": RemoteASR.name, "key_env": "KEY"})
    stats = ctx.request_stats()
    assert list(stats) == ["asr:test-contract-remote"]  # the embedded one sends nothing
    assert stats["asr:test-contract-remote"]["requests"] == 3.0
    assert stats["asr:test-contract-remote"]["retries"] == 1.0


def test_llm_base_keeps_no_answers_and_the_cache_forgets_its_own(tmp_path: Path) -> None:
    messages: list[Message] = [{"role": "user", "content": "hello"}]
    bare = CountingLLM()
    assert bare.forget_chat(messages) is False
    assert metered("llm", bare, ("llm", "c", "c")).forget_chat(messages) is False
    inner = CountingLLM()
    llm = cached("llm", metered("llm", inner, ("llm", "c", "c")), ProviderCache(tmp_path))
    assert llm.chat(messages).text == "answer 1"
    assert llm.chat(messages).text == "answer 1"  # a hit
    assert llm.forget_chat(messages) is True
    assert llm.chat(messages).text == "answer 2"
    assert inner.calls == 2


def tone(seconds: float) -> Audio:
    return Audio(np.zeros(int(seconds * RATE), np.float32), RATE)


class SegmentsVAD(VADBase):
    """A VAD that only gives segments (the base's defaults for the rest)."""

    name = "test-contract-segments"

    def identity(self) -> JSONObject:
        return {"provider": self.name}

    def segments(self, audio: Audio) -> list[SpeechSegment]:
        return [SpeechSegment(0.2, 0.6)]


class ScoringVAD(SegmentsVAD):
    """Scores frames: speech from 0.2 s to 0.6 s with a 0.1 s dip at 0.4 s that the segments
    (merged over short pauses) do not show."""

    name = "test-contract-scoring"

    def speech_probabilities(self, audio: Audio) -> FrameProbabilities:
        starts = np.arange(0.0, audio.duration, 0.1)
        probs = np.array([0.0, 0.0, 0.9, 0.9, 0.1, 0.9, 0.0, 0.0])[: starts.size]
        return starts, probs


class FixedStream:
    def __init__(self, probability: float) -> None:
        self.probability = probability

    def push(self, samples: npt.ArrayLike) -> npt.NDArray[np.float64]:
        windows = np.asarray(samples).size // 512
        return np.full(windows, self.probability)


class StreamingVAD(SegmentsVAD):
    name = "test-contract-streaming"
    streams = True

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold

    def open_stream(self, rate: int = RATE) -> FixedStream:
        return FixedStream(0.4)


def test_vad_base_gives_segments_only_and_cannot_stream() -> None:
    vad = SegmentsVAD()
    assert vad.speech_probabilities(tone(1.0)) is None
    assert vad.streams is False and vad.threshold == 0.5
    with pytest.raises(TypeError, match="cannot stream"):
        vad.open_stream()
    with pytest.raises(TypeError, match="vad test-contract-segments: cannot stream"):
        frame_vad_from(vad)
    flags = ProviderVAD(vad).speech_frames(tone(0.8), 0.1)
    assert flags.tolist() == [False, False, True, True, True, True, False, False]


def test_turn_detection_uses_frame_probabilities_when_a_vad_scores_frames(
    tmp_path: Path,
) -> None:
    expected = [False, False, True, True, False, True, False, False]  # the dip is kept
    vad = ScoringVAD()
    assert ProviderVAD(vad).speech_frames(tone(0.8), 0.1).tolist() == expected
    wrapped = cached("vad", metered("vad", vad, ("vad", "s", "s")), ProviderCache(tmp_path))
    assert ProviderVAD(wrapped).speech_frames(tone(0.8), 0.1).tolist() == expected


@pytest.mark.parametrize(("threshold", "speech"), [(0.3, True), (0.5, False)])
def test_a_streaming_vad_opens_its_stream_at_its_own_threshold(
    tmp_path: Path, threshold: float, speech: bool
) -> None:
    inner = StreamingVAD(threshold)
    wrapped = cached("vad", metered("vad", inner, ("vad", "s", "s")), ProviderCache(tmp_path))
    for provider in (inner, wrapped):
        assert provider.streams is True
        assert provider.threshold == threshold
        frame_vad = frame_vad_from(provider)
        assert frame_vad.is_speech(np.zeros(512, np.float32)) is speech
