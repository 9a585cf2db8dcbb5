"""``ScoringResources.transcripts``: one decode per record, shared by its metrics, and records
decoded side by side (a remote scoring ASR is not called one request at a time)."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

from tests.fakes.openai_server import FakeOpenAIServer
from tests.scoring.helpers import transcription
from voxeval.audio import Audio
from voxeval.errors import HarnessFault, ProviderUnavailable
from voxeval.providers.factory import create_provider
from voxeval.scoring import ReplyRecord, ScoringResources, TranscriptSettings
from voxeval.scoring.replies.reply_record import scoring_asr_faults


def resources(server: FakeOpenAIServer) -> ScoringResources:
    def asr() -> Any:
        return create_provider("asr", {"provider": "openai", "base_url": server.url})

    return ScoringResources(asr=asr, transcript_settings=TranscriptSettings(k=1, max_decodes=1))


def record(item: str) -> ReplyRecord:
    samples = (0.3 * np.sin(np.arange(8000) * 0.07)).astype(np.float32)
    return ReplyRecord(item_id=item, query="q", reply_audio=Audio(samples, 16000))


def in_parallel(calls: list[Any]) -> list[Any]:
    results: list[Any] = [None] * len(calls)
    start = threading.Barrier(len(calls))

    def run(i: int) -> None:
        start.wait()
        results[i] = calls[i]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results


def test_records_scored_at_once_reach_a_remote_asr_at_once() -> None:
    with FakeOpenAIServer(lambda path, body: transcription("hello there"), delay_s=0.3) as server:
        scoring = resources(server)
        records = [record(f"q{i}") for i in range(4)]
        sets = in_parallel([lambda r=r: scoring.transcripts(r) for r in records])
    assert [s.greedy for s in sets] == ["hello there"] * 4
    assert len(server.spans) == 4 and server.peak_in_flight == 4


def test_one_record_scored_by_two_threads_is_decoded_once() -> None:
    with FakeOpenAIServer(lambda path, body: transcription("hello there"), delay_s=0.2) as server:
        scoring = resources(server)
        same = record("q0")
        first, second = in_parallel([lambda: scoring.transcripts(same)] * 2)
    assert first is second and len(server.spans) == 1


def test_scoring_asr_faults_classify_an_asr_error_as_ours_and_pass_known_faults_on() -> None:
    with pytest.raises(HarnessFault) as caught, scoring_asr_faults():
        raise ValueError("decoder exploded")
    assert caught.value.component == "scoring_asr"
    assert str(caught.value) == "scoring ASR failed: ValueError: decoder exploded"
    assert isinstance(caught.value.__cause__, ValueError)
    with pytest.raises(ProviderUnavailable), scoring_asr_faults():
        raise ProviderUnavailable("no whisper here")
    judge_fault = HarnessFault("judge down", component="judge")
    with pytest.raises(HarnessFault) as passed, scoring_asr_faults():
        raise judge_fault
    assert passed.value is judge_fault
