"""A judge or scoring ASR that fails on our side leaves the metric pending (retried by the
next run or score), never "not run"; a checklist over fewer than k transcripts is flagged."""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.openai_server import chat_text, error
from tests.scoring.helpers import transcription
from voxeval.audio import Audio
from voxeval.providers.asr.asr_whisper import WhisperTinyEn
from voxeval.providers.factory import create_provider
from voxeval.scoring import (
    Judge,
    ReplyRecord,
    Score,
    ScoringResources,
    TranscriptSettings,
    run_metric,
)
from voxeval.scoring.metric_runner import guarded_metric


def record(tone: Audio) -> ReplyRecord:
    return ReplyRecord(
        item_id="q1",
        query="How long should I boil an egg?",
        reply_audio=tone,
        checklist=("Gives a time between 6 and 10 minutes",),
        assertions=(),
    )


def resources(server: Any) -> ScoringResources:
    """ASR and judge on the fake server, without provider retries (the test is about what
    happens once they are exhausted)."""
    spec = {"provider": "openai", "base_url": server.url, "max_retries": 0}
    llm = {**spec, "model": "j"}
    return ScoringResources(
        asr=lambda: create_provider("asr", spec),
        judge=lambda: Judge(create_provider("llm", llm), max_attempts=2),
        transcript_settings=TranscriptSettings(k=3, max_decodes=10),
    )


def test_a_judge_endpoint_down_leaves_the_checklist_pending(openai_server, tone) -> None:
    def responder(path: str, body: Any) -> Any:
        if path.endswith("/audio/transcriptions"):
            return transcription("Eight minutes.")
        return error(500, "judge overloaded")

    openai_server.responder = responder
    score = run_metric("checklist", record(tone), resources(openai_server))
    assert score.pending and not score.ran
    assert score.error is not None and "EndpointError" in score.error
    assert "judge overloaded" in score.error


def test_a_scoring_asr_down_leaves_transcript_metrics_pending(openai_server, tone) -> None:
    openai_server.responder = lambda path, body: error(503, "asr down")
    for metric in ("checklist", "speaking_rate"):
        score = run_metric(metric, record(tone), resources(openai_server))
        assert score.pending, metric


@pytest.mark.models
def test_a_local_scoring_asr_failure_is_ours_and_pending(openai_server, tone) -> None:
    """The embedded English-only Whisper refuses a Spanish decode: an error of our scoring
    model (not an endpoint's), which still leaves the metric pending, not scored."""
    if not WhisperTinyEn.availability().available:
        pytest.skip(WhisperTinyEn.availability().reason)
    spanish = TranscriptSettings(k=3, max_decodes=10, language="es")
    local = ScoringResources(asr=WhisperTinyEn, transcript_settings=spanish)
    score = run_metric("speaking_rate", record(tone), local)
    assert score.pending and score.value is None
    assert score.error is not None
    assert "scoring ASR failed: ConfigError: asr 'whisper-tiny-en' is English-only" in score.error
    assert openai_server.requests == []


def test_a_metric_bug_is_still_not_run() -> None:
    def broken() -> Score:
        raise KeyError("missing field")

    score = guarded_metric("broken", broken)
    assert not score.pending and score.error == "broken failed: KeyError: 'missing field'"


def test_checklist_with_an_unreadable_transcript_is_pending(openai_server, tone) -> None:
    """The judge never made one transcript's score readable: the checklist waits for it
    (pending), rather than averaging the other two (issue 37, point 10)."""
    answers = [chat_text("Score: 8"), chat_text("no"), chat_text("still no"), chat_text("Score: 6")]

    def responder(path: str, body: Any) -> Any:
        if path.endswith("/audio/transcriptions"):
            return transcription("Eight minutes.")
        return answers.pop(0)

    openai_server.responder = responder
    score = run_metric("checklist", record(tone), resources(openai_server))
    assert score.pending and not score.ran and score.value is None
    assert score.details["scores"] == [8.0, None, 6.0]
    assert (score.details["transcripts_used"], score.details["k"]) == (2, 3)


def test_the_single_turn_summary_counts_checklists_over_fewer_than_k() -> None:
    from voxeval.protocols.single_turn_summary import judge_accounting
    from voxeval.store.records import ScoreRow

    def row(used: int) -> ScoreRow:
        details = {"judge_calls": 3, "transcripts_used": used, "k": 3}
        return ScoreRow("q", "s", 0, "clean", "II", "checklist", 5.0, None, None, details)

    assert judge_accounting([row(3), row(2), row(1)])["scores_over_fewer_than_k_transcripts"] == 2
