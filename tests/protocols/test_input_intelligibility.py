"""The user-side ASR error per condition: golden corpus WER, mean and median by hand, with the
``openai`` scoring ASR against a loopback server scripted with what it heard in each file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.transcription_endpoint import (
    remote_asr,
    transcription,
    upload_audio,
    uploaded_audio,
)
from voxeval.audio import Audio, write_audio
from voxeval.benchmarks.build_manifest import RenderedQuery
from voxeval.benchmarks.wildspeech.spoken_query import SpokenQuery
from voxeval.protocols.input_intelligibility import input_error_rates
from voxeval.report.document import intelligibility_blocks
from voxeval.report.markdown import render_markdown


def _item(
    tmp_path: Path, query_id: str, text: str, condition: str, seconds: float
) -> RenderedQuery:
    path = tmp_path / f"{query_id}__{condition}.wav"
    write_audio(Audio.silence(seconds), path)
    query = SpokenQuery(id=query_id, text=text, category="II")
    entry = {"item_id": f"{query_id}__p__{condition}"}
    return RenderedQuery(query, "p", condition, path, entry)


def test_per_condition_corpus_wer_mean_and_median(tmp_path: Path) -> None:
    # Each file has its own length, so the upload tells the server which one it hears.
    heard = {
        0.2: "book a table for two",  # q1 clean: 5 words, heard exactly
        0.3: "what time was it",  # q2 clean: 4 words, 1 substitution
        0.4: "book a table",  # q1 natural_noise: 2 deletions
        0.5: "",  # q2 natural_noise: all 4 deleted
    }
    items = [
        _item(tmp_path, "q1", "book a table for two", "clean", 0.2),
        _item(tmp_path, "q2", "what time is it", "clean", 0.3),
        _item(tmp_path, "q1", "book a table for two", "natural_noise", 0.4),
        _item(tmp_path, "q2", "what time is it", "natural_noise", 0.5),
    ]
    with FakeOpenAIServer() as server:
        server.responder = lambda path, body: transcription(
            heard[round(upload_audio(body).duration, 1)]
        )
        result = input_error_rates({i.item_id: i for i in items}, remote_asr(server), seed=3)
    assert len(uploaded_audio(server)) == 4  # once per rendered item
    clean, noisy = result["clean"], result["natural_noise"]
    assert clean["corpus_wer"] == pytest.approx(1 / 9)
    assert clean["mean"] == pytest.approx((0 + 1 / 4) / 2)
    assert clean["median"] == pytest.approx(0.125)
    assert (clean["n"], clean["errors"], clean["ref_words"]) == (2, 1, 9)
    assert noisy["corpus_wer"] == pytest.approx(6 / 9)
    assert noisy["mean"] == pytest.approx((2 / 5 + 1) / 2)
    markdown = render_markdown_blocks(result)
    assert "User-side ASR error by condition" in markdown
    assert "| natural_noise | 0.667 |" in markdown


def render_markdown_blocks(result: dict[str, dict[str, object]]) -> str:
    summary = {"suite": {"name": "s"}, "systems": {}, "input_intelligibility": result}
    text = render_markdown(summary)
    assert intelligibility_blocks(result)
    return text


def _profile_item(
    tmp_path: Path, query_id: str, text: str, profile: str, seconds: float
) -> RenderedQuery:
    path = tmp_path / f"{query_id}__{profile}.wav"
    write_audio(Audio.silence(seconds), path)
    query = SpokenQuery(id=query_id, text=text, category="II")
    entry = {"item_id": f"{query_id}__{profile}__clean"}
    return RenderedQuery(query, profile, "clean", path, entry)


def test_per_profile_corpus_wer_and_the_profiles_over_the_limit(tmp_path: Path) -> None:
    heard = {
        0.2: "book a table for two",  # clear voice: q1 exact
        0.3: "what time is it",  # clear voice: q2 exact
        0.4: "book a cable for you",  # hard voice: 2 of 5 wrong
        0.5: "what time is it",  # hard voice: q2 exact
    }
    items = [
        _profile_item(tmp_path, "q1", "book a table for two", "clear", 0.2),
        _profile_item(tmp_path, "q2", "what time is it", "clear", 0.3),
        _profile_item(tmp_path, "q1", "book a table for two", "hard", 0.4),
        _profile_item(tmp_path, "q2", "what time is it", "hard", 0.5),
    ]
    with FakeOpenAIServer() as server:
        server.responder = lambda path, body: transcription(
            heard[round(upload_audio(body).duration, 1)]
        )
        result = input_error_rates({i.item_id: i for i in items}, remote_asr(server))
    clean = result["clean"]
    assert clean["corpus_wer"] == pytest.approx(2 / 18)
    assert clean["by_profile"]["clear"]["corpus_wer"] == 0.0
    assert clean["by_profile"]["hard"]["corpus_wer"] == pytest.approx(2 / 9)
    assert clean["by_profile"]["hard"]["n"] == 2
    assert clean["wer_limit"] == 0.15 and clean["over_limit"] == ["hard"]
    assert "dnsmos_ovrl" not in clean  # no MOS model given: none invented
    markdown = render_markdown_blocks(result)
    assert "| clean | hard | 0.222 |" in markdown
    assert "clean queries of hard are misheard above the 15% limit" in markdown
