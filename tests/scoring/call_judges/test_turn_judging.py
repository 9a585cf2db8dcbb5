"""The bookkeeping of per-turn judge calls adds up over the turns, and only a judge that is
asked to hear audio is taken as the audio judge."""

from __future__ import annotations

import pytest

from tests.fakes.openai_server import FakeOpenAIServer
from voxeval.errors import ProviderUnavailable
from voxeval.providers.factory import create_provider
from voxeval.providers.http.openai_http import RequestCounts
from voxeval.scoring.call_judges.turn_judging import audio_judge_of, summed_accounting
from voxeval.scoring.judge import Judge, JudgeResult
from voxeval.scoring.replies.reply_record import ScoringResources


def result(calls: int, failures: int, cost: float | None, requests: int) -> JudgeResult:
    http = RequestCounts(requests=requests, retries=requests - calls)
    return JudgeResult(1.0, ("{}",) * calls, calls, failures, {}, None, 100, 20, cost, http=http)


def test_accounting_is_summed_over_turns() -> None:
    total = summed_accounting([result(1, 0, None, 1), result(3, 2, 0.25, 4), result(1, 0, 0.5, 1)])
    assert total == {
        "judge_calls": 5,
        "judge_requests": 6,
        "judge_retries": 1,
        "judge_timeouts": 0,
        "parse_failures": 2,
        "prompt_tokens": 300,
        "completion_tokens": 60,
        "cost_usd": 0.75,
    }
    assert summed_accounting([result(1, 0, None, 1)])["cost_usd"] is None


def test_a_text_judge_is_not_taken_as_the_audio_judge(openai_server: FakeOpenAIServer) -> None:
    spec = {"provider": "openai", "base_url": openai_server.url, "model": "j"}
    text_judge = Judge(create_provider("llm", spec))
    with pytest.raises(ProviderUnavailable, match="must hear audio"):
        audio_judge_of(ScoringResources(audio_judge=lambda: text_judge))
    with pytest.raises(ProviderUnavailable, match="no audio judge configured"):
        audio_judge_of(ScoringResources())
    audio = Judge(create_provider("audio_llm", spec), modality="audio")
    assert audio_judge_of(ScoringResources(audio_judge=lambda: audio)) is audio
    assert openai_server.requests == []  # choosing a judge asks it nothing
