"""Golden cost arithmetic: tokens x price per million, audio minutes x price per minute,
calls x price per request; first matching glob wins; a model no entry matches is unpriced,
never free."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from voxeval.analysis.costs.costs import price_run, record_cost
from voxeval.analysis.costs.prices import PriceEntry, PriceTable, load_price_table
from voxeval.errors import ConfigError


def row(kind: str, provider: str, model: str, **amounts: Any) -> dict[str, Any]:
    base = {
        "unit_key": amounts.pop("unit_key", "u1"),
        "system": amounts.pop("system", "s"),
        "component": amounts.pop("component", "judge"),
        "kind": kind,
        "provider": provider,
        "model": model,
        "calls": 1,
        "requests": 1,
        "retries": 0,
        "timeouts": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "prompt_audio_tokens": 0,
        "completion_audio_tokens": 0,
        "audio_in_s": 0.0,
        "audio_out_s": 0.0,
    }
    return {**base, **amounts}


def table(*entries: PriceEntry) -> PriceTable:
    return PriceTable(entries=entries, sources=({"file": "test"},))


def test_tokens_times_price_per_million() -> None:
    entry = PriceEntry(kind="llm", model="m", input_per_1m_tokens=2.5, output_per_1m_tokens=10)
    # 1200 * 2.5 / 1e6 + 300 * 10 / 1e6 = 0.003 + 0.003
    assert record_cost(
        row("llm", "openai", "m", prompt_tokens=1200, completion_tokens=300), entry
    ) == pytest.approx(0.006)


def test_audio_tokens_at_their_own_price_and_the_rest_as_text() -> None:
    entry = PriceEntry(
        kind="audio_llm",
        input_per_1m_tokens=1.0,
        output_per_1m_tokens=4.0,
        audio_input_per_1m_tokens=40.0,
        audio_output_per_1m_tokens=80.0,
    )
    used = row(
        "audio_llm",
        "openai",
        "m",
        prompt_tokens=1000,
        prompt_audio_tokens=600,
        completion_tokens=500,
        completion_audio_tokens=400,
    )
    # text 400 * 1 + 100 * 4, audio 600 * 40 + 400 * 80 (per million)
    expected = (400 * 1.0 + 100 * 4.0 + 600 * 40.0 + 400 * 80.0) / 1e6
    assert record_cost(used, entry) == pytest.approx(expected)
    # without an audio price, audio tokens are charged as text tokens
    text_only = PriceEntry(kind="audio_llm", input_per_1m_tokens=1.0, output_per_1m_tokens=4.0)
    assert record_cost(used, text_only) == pytest.approx((1000 * 1.0 + 500 * 4.0) / 1e6)


def test_audio_minutes_and_requests() -> None:
    asr = PriceEntry(kind="asr", audio_in_per_minute=0.006)
    assert record_cost(row("asr", "openai", "whisper-1", audio_in_s=90.0), asr) == pytest.approx(
        0.009
    )
    tts = PriceEntry(kind="tts", audio_out_per_minute=0.015, per_request=0.001)
    used = row("tts", "openai", "t", calls=3, audio_out_s=30.0)
    assert record_cost(used, tts) == pytest.approx(0.0075 + 0.003)


def test_first_matching_glob_wins() -> None:
    prices = table(
        PriceEntry(kind="llm", provider="openai", model="gpt-4o-mini*", input_per_1m_tokens=1),
        PriceEntry(kind="llm", provider="openai", model="gpt-4o*", input_per_1m_tokens=5),
        PriceEntry(kind="*", provider="whisper-*", model="*"),
    )
    assert prices.match("llm", "openai", "gpt-4o-mini-2024").input_per_1m_tokens == 1
    assert prices.match("llm", "openai", "gpt-4o").input_per_1m_tokens == 5
    assert prices.match("asr", "whisper-tiny-en", "whisper-tiny-en") is not None
    assert prices.match("llm", "other", "gpt-4o") is None


def test_unpriced_models_are_listed_and_totals_say_incomplete() -> None:
    prices = table(PriceEntry(kind="llm", model="judge", input_per_1m_tokens=1_000_000))
    rows = [
        row("llm", "openai", "judge", prompt_tokens=3, system="a"),
        row("llm", "openai", "judge", prompt_tokens=2, system="b", unit_key="u2"),
        row("system", "http", "http", component="system:b", system="b", unit_key="u2"),
    ]
    costs = price_run(rows, prices, {"a": 1, "b": 2, "c": 4})
    assert costs["total"]["cost_usd"] == pytest.approx(5.0)
    assert costs["total"]["complete"] is False and costs["total"]["unpriced_calls"] == 1
    assert costs["total"]["cost_per_unit_usd"] == pytest.approx(5.0 / 7)
    assert list(costs["unpriced"]) == ["system:http"]
    assert costs["unpriced"]["system:http"]["components"] == ["system:b"]
    a, b, c = (costs["by_system"][name] for name in "abc")
    assert (a["cost_usd"], a["complete"], a["cost_per_unit_usd"]) == (3.0, True, 3.0)
    assert (b["cost_usd"], b["complete"], b["cost_per_unit_usd"]) == (2.0, False, 1.0)
    assert b["by_component"]["system:b"]["complete"] is False
    assert (c["cost_usd"], c["units"], c["cost_per_unit_usd"]) == (0.0, 4, 0.0)
    assert costs["by_model"]["llm:openai:judge"]["cost_usd"] == pytest.approx(5.0)
    assert costs["by_model"]["system:http"]["cost_usd"] is None


def test_packaged_table_prices_embedded_models_at_zero_and_is_marked_example() -> None:
    prices = load_price_table()
    assert prices.sources[0]["example"] is True and prices.sources[0]["as_of"]
    for kind, provider in (("asr", "whisper-tiny-en"), ("tts", "piper"), ("llm", "smollm2")):
        entry = prices.match(kind, provider, provider)
        assert entry is not None and entry.prices() == {}
    assert prices.match("system", "http", "http") is None  # an endpoint: the user prices it


def test_a_user_table_comes_first_then_the_packaged_one(tmp_path: Path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text("models:\n  - {kind: tts, provider: piper, per_request: 0.5}\n")
    prices = load_price_table(path)
    assert prices.match("tts", "piper", "piper").per_request == 0.5
    assert prices.match("asr", "whisper-base", "whisper-base") is not None  # packaged
    path.write_text("include_defaults: false\nmodels: []\n")
    assert load_price_table(path).match("asr", "whisper-base", "whisper-base") is None


def test_a_bad_price_table_names_the_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text("models:\n  - {kind: llm, input_per_1m_token: 1}\n")
    with pytest.raises(ConfigError, match=r"prices.yaml.*input_per_1m_token"):
        load_price_table(path)
