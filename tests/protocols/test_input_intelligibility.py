"""The user-side ASR error per condition: golden corpus WER, mean and median by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from voxeval.audio import Audio, write_audio
from voxeval.benchmarks.build_manifest import RenderedQuery
from voxeval.benchmarks.spoken_query import SpokenQuery
from voxeval.protocols.input_intelligibility import input_error_rates
from voxeval.providers.base import Transcript
from voxeval.report.document import intelligibility_blocks
from voxeval.report.markdown import render_markdown


class HeardASR:
    """What a scoring ASR heard in each file (by file name): the formula under test is the
    pooling, not the recogniser."""

    name = "heard"

    def __init__(self, heard: dict[str, str]) -> None:
        self.heard = heard
        self.calls = 0

    def transcribe(self, audio: Audio, **_: object) -> Transcript:
        self.calls += 1
        return Transcript(text=self.heard[Path(audio.source).stem])


def _item(tmp_path: Path, query_id: str, text: str, condition: str) -> RenderedQuery:
    path = tmp_path / f"{query_id}__{condition}.wav"
    write_audio(Audio.silence(0.2), path)
    query = SpokenQuery(id=query_id, text=text, category="II")
    entry = {"item_id": f"{query_id}__p__{condition}"}
    return RenderedQuery(query, "p", condition, path, entry)


def test_per_condition_corpus_wer_mean_and_median(tmp_path: Path) -> None:
    items = [
        _item(tmp_path, "q1", "book a table for two", "clean"),  # 5 words, heard exactly
        _item(tmp_path, "q2", "what time is it", "clean"),  # 4 words, 1 substitution
        _item(tmp_path, "q1", "book a table for two", "natural_noise"),  # 2 deletions
        _item(tmp_path, "q2", "what time is it", "natural_noise"),  # all 4 deleted
    ]
    asr = HeardASR(
        {
            "q1__clean": "book a table for two",
            "q2__clean": "what time was it",
            "q1__natural_noise": "book a table",
            "q2__natural_noise": "",
        }
    )
    result = input_error_rates({i.item_id: i for i in items}, asr, seed=3)
    assert asr.calls == 4  # once per rendered item
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
