from __future__ import annotations

from tests.fakes.openai_server import chat_text
from tests.scoring.helpers import remote_resources, transcription
from voxeval.scoring import ReplyRecord, run_metric


def record(tone) -> ReplyRecord:
    return ReplyRecord(
        item_id="q1",
        query="How long should I boil an egg?",
        reply_audio=tone,
        checklist=("Gives a time between 6 and 10 minutes", "Mentions soft vs hard"),
    )


def test_checklist_mean_over_transcripts_with_retries(openai_server, tone) -> None:
    def responder(path, body):
        if path.endswith("/audio/transcriptions"):
            return transcription("Boil it for eight minutes.")
        return scripted.pop(0)

    scripted = [
        chat_text("Strengths: short.\nScore: 8"),
        chat_text("I would say 6."),  # malformed -> retried
        chat_text("Weak.\nScore: 6"),
        chat_text("Score: 7"),
    ]
    openai_server.responder = responder
    score = run_metric("checklist", record(tone), remote_resources(openai_server))
    assert score.ran
    assert score.value == 7.0
    assert score.details["scores"] == [8.0, 6.0, 7.0]
    assert score.details["judge_calls"] == 4
    assert score.details["parse_failures"] == 1
    prompt = next(r.body for r in openai_server.requests if r.path.endswith("/chat/completions"))
    user = prompt["messages"][1]["content"]
    assert "- Gives a time between 6 and 10 minutes" in user
    assert "Boil it for eight minutes." in user
    assert "Length is not merit" in user


def test_checklist_without_judge_is_not_run(openai_server, tone) -> None:
    resources = remote_resources(openai_server, with_judge=False)
    score = run_metric("checklist", record(tone), resources)
    assert not score.ran
    assert score.error is not None and "no judge" in score.error
    assert openai_server.requests == []
