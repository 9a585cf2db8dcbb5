from __future__ import annotations

import numpy as np
import pytest

from tests.scoring.helpers import remote_resources, transcription
from voxeval.audio import Audio
from voxeval.scoring import ReplyRecord, ScoringResources, run_metric


def test_wer_against_text_channel(openai_server, tone) -> None:
    openai_server.push(*[transcription("Boil it for 8 minutes, OK?") for _ in range(3)])
    rec = ReplyRecord(
        item_id="q", query="q", reply_audio=tone, reply_text="Boil it for eight minutes, okay."
    )
    resources = remote_resources(openai_server)
    wer = run_metric("wer", rec, resources)
    assert wer.value == 0.0  # normalisation removes case, punctuation and number spelling
    rate = run_metric("speaking_rate", rec, resources)
    assert rate.value == pytest.approx(6 / (1 / 60))
    assert run_metric("duration", rec, resources).value == pytest.approx(1.0)
    lang = run_metric("language", rec, resources)  # no identifier: not run, never a default
    assert not lang.ran and lang.error == "no spoken-language identifier is configured"


def test_wer_counts_errors(openai_server, tone) -> None:
    openai_server.push(*[transcription("the cat sat") for _ in range(3)])
    rec = ReplyRecord(item_id="q", query="q", reply_audio=tone, reply_text="the cat sat down")
    wer = run_metric("wer", rec, remote_resources(openai_server))
    assert wer.value == 0.25 and wer.details["deletions"] == 1
    assert wer.details["errors"] == 1 and wer.details["ref_words"] == 4


def test_wer_ignores_number_formatting(openai_server, tone) -> None:
    # regression: "1,234,567" used to normalise to two words, "1234 567"
    heard = "It is one million two hundred thirty-four thousand five hundred sixty-seven miles."
    openai_server.push(*[transcription(heard) for _ in range(3)])
    rec = ReplyRecord(item_id="q", query="q", reply_audio=tone, reply_text="It is 1,234,567 miles.")
    wer = run_metric("wer", rec, remote_resources(openai_server))
    assert wer.value == 0.0 and wer.details["ref_words"] == 4


def test_wer_uses_the_normaliser_of_the_expected_language(openai_server, tone) -> None:
    openai_server.push(*[transcription("Es ist zwölf Uhr.") for _ in range(3)])
    rec = ReplyRecord(
        item_id="q", query="q", reply_audio=tone, reply_text="Es ist 12 Uhr.",
        expected_language="de",
    )  # fmt: skip
    wer = run_metric("wer", rec, remote_resources(openai_server))
    # no English number rules for German: "12" and "zwölf" are different words
    assert wer.value == pytest.approx(1 / 4)
    assert wer.details["reference"] == "es ist 12 uhr"


def test_metrics_that_cannot_run_say_why(tone) -> None:
    no_text = ReplyRecord(item_id="q", query="q", reply_audio=tone)
    assert "text channel" in (run_metric("wer", no_text, ScoringResources()).error or "")
    silent = ReplyRecord(item_id="q", query="q", reply_audio=None, reply_text="hi")
    assert run_metric("mos", silent, ScoringResources()).error == "the reply has no audio"
    assert "no MOS" in (run_metric("mos", no_text, ScoringResources()).error or "")


@pytest.mark.models
def test_dnsmos_on_reply_audio() -> None:
    from voxeval.providers.factory import create_provider

    rng = np.random.default_rng(0)
    noise = Audio((0.1 * rng.standard_normal(32000)).astype(np.float32), 16000)
    resources = ScoringResources(mos=lambda: create_provider("mos", "dnsmos"))
    score = run_metric("mos", ReplyRecord(item_id="q", query="q", reply_audio=noise), resources)
    assert score.ran and 1.0 <= (score.value or 0) <= 5.0
    assert "model" in score.details
