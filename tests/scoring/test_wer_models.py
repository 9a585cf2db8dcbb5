"""The quickstart's WER path with the real embedded models: Piper speaks a reply to the
wild-mini item ii-01 (distance to the Moon, full of large numbers) and Whisper tiny.en, the
default scoring ASR, transcribes it. Number formatting must not cost anything."""

from __future__ import annotations

import pytest

from voxeval.providers import create_provider
from voxeval.scoring import ReplyRecord, ScoringResources, TranscriptSettings, run_metric

pytestmark = pytest.mark.models

II01_QUERY = (
    "How far away is the moon, roughly, and how long would it take to drive there at highway speed?"
)
II01_REPLIES = [
    "The Moon is about 384,400 kilometers away, roughly 238,900 miles. At a highway speed of "
    "100 kilometers per hour, driving nonstop would take about 3,844 hours, or around 160 days.",
    "The moon is about 1,234,567 miles away. At 60 miles per hour it would take 20,576 hours.",
    "It is 1,000,000,000,000,000 miles.",  # Piper says "one quadrillion"
]


@pytest.fixture(scope="module")
def resources() -> ScoringResources:
    return ScoringResources(
        asr=lambda: create_provider("asr", "whisper-tiny-en"),
        transcript_settings=TranscriptSettings(k=1, max_decodes=1),
    )


@pytest.mark.parametrize("reply", II01_REPLIES)
def test_ii01_reply_wer_is_low(reply: str, resources: ScoringResources) -> None:
    audio = create_provider("tts", "piper").synthesize(reply)
    record = ReplyRecord(item_id="ii-01", query=II01_QUERY, reply_audio=audio, reply_text=reply)
    wer = run_metric("wer", record, resources)
    assert wer.ran, wer.error
    # The numbers match whatever way Whisper writes them; what remains are abbreviations
    # such as "km" (about 0.17 on the first reply); the old normaliser gave up to 0.5.
    assert wer.value is not None and wer.value < 0.3, wer.details
    assert wer.details["errors"] <= 0.3 * wer.details["ref_words"]
