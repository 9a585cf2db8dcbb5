"""The provider call cache: keys, exact round trips, wrappers, provenance, secrets, safety."""

from __future__ import annotations

import json
import multiprocessing
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text, chat_tool_call
from voxeval import __version__
from voxeval.audio import Audio, audio_to_wav_bytes
from voxeval.providers import (
    ChatResponse,
    MOSResult,
    ProviderCache,
    SpeechSegment,
    ToolCall,
    Transcript,
    Usage,
    Word,
    cached,
    create_provider,
    default_cache,
)
from voxeval.providers.caching.cache_codec import cache_key

USER = [{"role": "user", "content": "Say hi."}]


def llm_spec(server: FakeOpenAIServer, **extra: Any) -> dict[str, Any]:
    return {"provider": "openai", "base_url": server.url, "model": "m", **extra}


def noise(seconds: float = 0.25, rate: int = 16000, seed: int = 0) -> Audio:
    rng = np.random.default_rng(seed)
    return Audio(rng.normal(0, 0.3, round(seconds * rate)).astype(np.float32), rate)


def test_second_identical_call_sends_no_request(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    openai_server.push(chat_text("hi there"), chat_text("other"))
    cache = ProviderCache(tmp_path)
    llm = create_provider("llm", llm_spec(openai_server), cache=cache)
    first = llm.chat(USER)
    assert len(openai_server.requests) == 1
    second = llm.chat(USER)
    assert len(openai_server.requests) == 1  # answered from disk
    assert second.cached and not first.cached
    assert (second.text, second.usage, second.model) == (first.text, first.usage, first.model)
    assert llm.cache_stats() == {"hits": 1, "misses": 1, "bypassed": 0, "write_errors": 0}
    # Same call spelled with explicit defaults: same key.
    assert llm.chat(USER, temperature=0.0, seed=None).cached
    # A different parameter is a different call.
    assert llm.chat(USER, max_tokens=5).text == "other"
    assert len(openai_server.requests) == 2
    # A new provider object over the same cache folder also hits.
    again = create_provider("llm", llm_spec(openai_server), cache=ProviderCache(tmp_path))
    assert again.chat(USER).cached and len(openai_server.requests) == 2


def test_an_empty_chat_answer_is_not_stored(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    # a simulator that said nothing is retried: the retry must reach the model again
    openai_server.push(chat_text(""), chat_text("hello"))
    llm = create_provider("llm", llm_spec(openai_server), cache=ProviderCache(tmp_path))
    assert llm.chat(USER, seed=3).text == ""
    again = llm.chat(USER, seed=3)
    assert again.text == "hello" and not again.cached
    assert len(openai_server.requests) == 2
    assert llm.chat(USER, seed=3).cached  # a real answer is stored as usual


def test_sampling_calls_are_not_cached(openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    openai_server.push(chat_text("a"), chat_text("b"), chat_text("c"), chat_text("d"))
    llm = create_provider("llm", llm_spec(openai_server), cache=ProviderCache(tmp_path))
    assert [llm.chat(USER, temperature=0.8).text for _ in range(2)] == ["a", "b"]
    assert llm.cache_stats()["bypassed"] == 2
    # With a seed, a sampled call is reproducible and therefore cached.
    assert llm.chat(USER, temperature=0.8, seed=1).text == "c"
    assert llm.chat(USER, temperature=0.8, seed=1).text == "c"
    assert len(openai_server.requests) == 3


def test_structured_and_tool_replies_round_trip(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    schema = {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}
    openai_server.push(chat_text('{"x": 0.1}'), chat_tool_call("book", {"day": "mon"}))
    llm = create_provider("llm", llm_spec(openai_server), cache=ProviderCache(tmp_path))
    parsed = llm.chat(USER, response_schema=schema)
    tools = [{"type": "function", "function": {"name": "book", "parameters": {}}}]
    called = llm.chat(USER, tools=tools)
    assert llm.chat(USER, response_schema=schema).parsed == {"x": 0.1} == parsed.parsed
    again = llm.chat(USER, tools=tools)
    assert again.tool_calls == called.tool_calls and again.cached
    assert len(openai_server.requests) == 2


def test_api_key_never_reaches_the_cache(
    openai_server: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-cache-secret-4711"
    monkeypatch.setenv("VOXEVAL_TEST_KEY", secret)
    openai_server.push(chat_text("ok"))
    llm = create_provider(
        "llm",
        llm_spec(openai_server, api_key_env="VOXEVAL_TEST_KEY"),
        cache=ProviderCache(tmp_path),
    )
    llm.chat(USER)
    llm.chat(USER)
    assert openai_server.requests[0].headers["Authorization"] == f"Bearer {secret}"
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files
    assert not any(secret.encode() in p.read_bytes() for p in files)
    assert secret not in json.dumps(llm.identity())


def test_entry_layout_and_provenance(openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    openai_server.push(chat_text("hello"))
    llm = create_provider("llm", llm_spec(openai_server), cache=ProviderCache(tmp_path))
    llm.chat(USER, seed=3)
    (entry_file,) = (tmp_path / "calls" / "llm").rglob("*.json")
    key = entry_file.stem
    assert entry_file.parent.name == key[:2] and len(key) == 64
    entry = json.loads(entry_file.read_text())
    prov = entry["provenance"]
    assert prov["provider"]["base_url"] == openai_server.url
    assert prov["parameters"]["seed"] == 3 and prov["method"] == "chat"
    assert prov["voxeval_version"] == __version__ and prov["created_at"].startswith("20")
    assert prov["compute_s"] > 0
    assert not list(tmp_path.rglob("*.tmp"))


def test_results_round_trip_exactly(tmp_path: Path) -> None:
    cache = ProviderCache(tmp_path)
    loud = Audio(np.array([0.0, 1.7, -2.5, 1e-7, 0.123456789], dtype=np.float32), 22050, "x.wav")
    values: list[Any] = [
        Transcript(
            "hello world",
            "en",
            (Word("hello", 0.0, 0.41, 0.93), Word("world", 0.41, 0.9, None)),
            "whisper-tiny-en",
            {"avg_logprob": -0.123456789, "segments": [{"id": 0}]},
        ),
        ChatResponse(
            "spoken",
            (
                ToolCall("c1", "f", {"a": [1, 2]}, '{"a": [1, 2]}'),
                ToolCall("c2", "g", {}, "{", False),
            ),
            {"k": 1.25},
            Usage(7, 3, 0.000123),
            "gpt-x",
            audio=loud,
            latency_s=0.3333333333,
        ),
        MOSResult(3.1415926, {"sig": 3.5, "bak": 4.0, "ovrl": 3.14, "p808": 3.9}, "dnsmos"),
        loud,
        [SpeechSegment(0.5, 1.25), SpeechSegment(2.0, 3.0)],
    ]
    for i, value in enumerate(values):
        cache.save("test", f"{i:02d}" + "a" * 62, value, {"n": i})
        back = cache.load("test", f"{i:02d}" + "a" * 62)
        assert back == value, type(value).__name__
    restored = cache.load("test", "03" + "a" * 62)
    assert restored.source == "x.wav"
    assert restored.samples.tobytes() == loud.samples.tobytes()


def test_keys_hash_audio_content_and_rate() -> None:
    a = noise(seed=1)
    same = Audio(a.samples.copy(), a.rate, source="elsewhere.wav")
    ident = {"provider": "p"}
    key = cache_key("asr", "transcribe", ident, {"beam_size": 1}, {"audio": a})
    assert key == cache_key("asr", "transcribe", ident, {"beam_size": 1}, {"audio": same})
    other_rate = Audio(a.samples, 8000)
    assert key != cache_key("asr", "transcribe", ident, {"beam_size": 1}, {"audio": other_rate})
    assert key != cache_key("asr", "transcribe", ident, {"beam_size": 1}, {"audio": noise(seed=2)})
    assert key != cache_key("asr", "transcribe", ident, {"beam_size": 5}, {"audio": a})
    assert key != cache_key("asr", "transcribe", {"provider": "q"}, {"beam_size": 1}, {"audio": a})


def test_tts_and_asr_wrappers(openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    speech = noise(0.5, 24000, seed=3)
    wav = audio_to_wav_bytes(speech)
    openai_server.push(
        FakeResponse(raw=wav, content_type="audio/wav"),
        FakeResponse(json_body={"text": "hello there"}),
    )
    cache = ProviderCache(tmp_path)
    tts = create_provider("tts", {"provider": "openai", "base_url": openai_server.url}, cache=cache)
    asr = create_provider("asr", {"provider": "openai", "base_url": openai_server.url}, cache=cache)
    first = tts.synthesize("Hello there.")
    assert tts.synthesize("Hello there.") == first
    assert [v.name for v in tts.voices()] == ["openai:alloy"]
    heard = asr.transcribe(first)
    assert asr.transcribe(first) == heard and heard.text == "hello there"
    assert len(openai_server.requests) == 2
    assert cache.stats()["hits"] == 2 and cache.stats()["misses"] == 2
    assert len(list((tmp_path / "calls" / "tts").rglob("*.wav"))) == 1


def test_damaged_entries_are_recomputed(openai_server: FakeOpenAIServer, tmp_path: Path) -> None:
    openai_server.push(chat_text("one"), chat_text("two"))
    llm = create_provider("llm", llm_spec(openai_server), cache=ProviderCache(tmp_path))
    llm.chat(USER)
    (entry_file,) = tmp_path.rglob("*.json")
    entry_file.write_text('{"key": "trunc')
    assert llm.chat(USER).text == "two"
    assert llm.chat(USER).cached and len(openai_server.requests) == 2


def test_concurrent_writers_leave_one_complete_entry(tmp_path: Path) -> None:
    cache = ProviderCache(tmp_path)
    values = [Transcript(f"text {i}", "en") for i in range(16)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda v: cache.save("asr", "ab" + "c" * 62, v, {}), values))
    assert cache.load("asr", "ab" + "c" * 62) in values
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == ["ab" + "c" * 62 + ".json"]


def _save_many(root: str, worker: int) -> None:
    cache = ProviderCache(root)
    for i in range(20):
        cache.save("asr", "cd" + "e" * 62, Transcript(f"worker {worker} entry {i}", "en"), {})


def test_concurrent_processes_share_a_cache(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    workers = [ctx.Process(target=_save_many, args=(str(tmp_path), w)) for w in range(3)]
    for proc in workers:
        proc.start()
    for proc in workers:
        proc.join(30)
    assert [proc.exitcode for proc in workers] == [0, 0, 0]
    found = ProviderCache(tmp_path).load("asr", "cd" + "e" * 62)
    assert found is not None and found.text.startswith("worker ")
    assert len([p for p in tmp_path.rglob("*") if p.is_file()]) == 1


def test_disabling_and_default_location(
    openai_server: FakeOpenAIServer, tmp_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = default_cache()
    assert cache is not None and cache.root == tmp_cache
    openai_server.push(chat_text("x"), chat_text("y"), chat_text("z"))
    llm = create_provider("llm", llm_spec(openai_server), cache="default")
    llm.chat(USER)
    assert llm.chat(USER).cached
    monkeypatch.setenv("VOXEVAL_NO_CACHE", "1")
    assert default_cache() is None
    plain = create_provider("llm", llm_spec(openai_server), cache="default")
    assert not hasattr(plain, "cache_stats")
    assert cached("llm", llm, ProviderCache(tmp_cache)) is llm.inner
    assert llm.chat(USER).text == "y"  # an existing wrapper stops using the cache too
    assert len(openai_server.requests) == 2


def test_auth_material_stays_out_of_keys_and_entries(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    """URL credentials and extra_body tokens: not in any cache file (even before a run
    registers them as secrets), and rotating a URL credential keeps the cache key."""
    token, password = "xb-cache-token-98765", "pw-cache-1234567"
    host = openai_server.url.split("//", 1)[1]
    openai_server.push(chat_text("ok"))
    cache = ProviderCache(tmp_path)
    llm = create_provider(
        "llm",
        llm_spec(openai_server, base_url=f"http://me:{password}@{host}",
                 extra_body={"user_token": token}),
        cache=cache,
    )  # fmt: skip
    llm.chat(USER)
    assert openai_server.requests[0].body["user_token"] == token  # really sent
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files
    for secret in (token, password):
        assert not any(secret.encode() in p.read_bytes() for p in files), secret
    rotated = create_provider(
        "llm",
        llm_spec(openai_server, base_url=f"http://me:other-password-1@{host}",
                 extra_body={"user_token": token}),
        cache=cache,
    )  # fmt: skip
    assert rotated.chat(USER).cached and len(openai_server.requests) == 1


def test_secrets_echoed_into_results_are_redacted_from_entries(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    from voxeval.redaction import REDACTED, register_config_secrets

    secret = "echoed-judge-key-24680"
    register_config_secrets({"api_key": secret})
    openai_server.push(chat_text(f"your key is {secret}"))
    llm = create_provider("llm", llm_spec(openai_server), cache=ProviderCache(tmp_path))
    assert secret in llm.chat(USER).text  # the live answer is untouched
    assert llm.chat(USER).text == f"your key is {REDACTED}"  # the cached copy is redacted
    assert not any(secret.encode() in p.read_bytes() for p in tmp_path.rglob("*.json"))
