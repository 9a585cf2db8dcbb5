from __future__ import annotations

from dataclasses import replace

from tests.fakes.openai_server import chat_text
from tests.scoring.helpers import remote_resources, transcription
from voxeval.scoring import ReplyRecord, run_metric
from voxeval.scoring.replies.checklist import GENERAL_CHECKLIST, VOXEVAL_JUDGING
from voxeval.scoring.replies.reply_record import ScoringResources


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


def test_an_unreadable_judge_answer_leaves_the_checklist_pending(openai_server, tone) -> None:
    """One transcript of three never gets a readable score: the checklist is pending (retried
    later), not a mean over the other two and not "not run" (issue 37, point 10)."""
    answers = iter(["Score: 8", "no score here", "still none", "nope", "Score: 6"])

    def responder(path, body):
        if path.endswith("/audio/transcriptions"):
            return transcription("Boil it for eight minutes.")
        return chat_text(next(answers))

    openai_server.responder = responder
    score = run_metric("checklist", record(tone), remote_resources(openai_server))
    assert score.pending and not score.ran and score.value is None
    assert score.error is not None
    assert "no readable score for transcript(s) 2 of 3" in score.error
    assert "last line is not 'Score: N'" in score.error
    assert score.details["scores"] == [8.0, None, 6.0]


def test_an_unreadable_answer_is_not_kept_in_the_call_cache(openai_server, tmp_path) -> None:
    """A cached judge whose answer cannot be read: nothing stays in the cache, so asking
    again (a resumed run, ``voxeval score``) sends the request again (issue 37, point 17)."""
    from voxeval.providers.caching.cache import ProviderCache, cached
    from voxeval.providers.factory import create_provider
    from voxeval.scoring import Judge
    from voxeval.scoring.replies.checklist import CHECKLIST_TEMPLATE

    answers = ["I liked it.", "Really.", "Fine.", "Strengths: short.\nScore: 7"]
    openai_server.responder = lambda path, body: chat_text(answers.pop(0))
    cache = ProviderCache(tmp_path / "cache")
    spec = {"provider": "openai", "base_url": openai_server.url, "model": "j"}
    llm = create_provider("llm", spec)
    judge = Judge(cached("llm", llm, cache), max_attempts=3)
    variables = {"query": "Q?", "reply": "A.", "checklist": "- x"}
    first = judge.grade(CHECKLIST_TEMPLATE, variables, seed=5)
    assert first.value is None and first.parse_failures == 3
    assert list((tmp_path / "cache").rglob("*.json")) == []
    again = judge.grade(CHECKLIST_TEMPLATE, variables, seed=5)  # the judge now answers
    assert again.value == 7.0 and len(openai_server.posts("/chat/completions")) == 4
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 1  # a readable answer is kept
    assert judge.grade(CHECKLIST_TEMPLATE, variables, seed=5).value == 7.0
    assert len(openai_server.posts("/chat/completions")) == 4  # ... and answers from the cache


def test_the_resources_checklist_setting_is_used_and_ours_by_default(openai_server, tone) -> None:
    """``ScoringResources.checklist_judging`` is declared: None (the default) is voxeval's
    setting, a given setting replaces it (here: its general checklist)."""

    def responder(path, body):
        if path.endswith("/audio/transcriptions"):
            return transcription("Boil it for eight minutes.")
        return chat_text("Score: 7")

    openai_server.responder = responder

    def first_prompt(resources: ScoringResources) -> str:
        openai_server.requests.clear()
        assert run_metric("checklist", record(tone), resources).value == 7.0
        chat = next(r for r in openai_server.requests if r.path.endswith("/chat/completions"))
        return str(chat.body["messages"][1]["content"])

    ours = remote_resources(openai_server, k=1)
    assert ours.checklist_judging is None
    assert f"- {GENERAL_CHECKLIST[0]}" in first_prompt(ours)
    pirate = replace(VOXEVAL_JUDGING, general_checklist=("Talks like a pirate",))
    theirs = remote_resources(openai_server, k=1)
    theirs.checklist_judging = pirate
    prompt = first_prompt(theirs)
    assert "- Talks like a pirate" in prompt and f"- {GENERAL_CHECKLIST[0]}" not in prompt
