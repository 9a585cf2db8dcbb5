from __future__ import annotations

import pytest

from tests.fakes.openai_server import chat_text
from voxeval.providers.factory import create_provider
from voxeval.scoring import Judge, JudgeOutputError, JudgeTemplate, parse_score_line

TEMPLATE = JudgeTemplate(name="t", system="You grade.", user="Grade {reply} against {checklist}")


def make_judge(server, attempts: int = 3) -> Judge:
    llm = create_provider("llm", {"provider": "openai", "base_url": server.url, "model": "judge"})
    return Judge(llm, max_attempts=attempts)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Analysis...\nScore: 7", 7.0),
        ("fine\n**Score: 10**\n\n", 10.0),
        ("Score: [3]", 3.0),
        ("score : 4", 4.0),
    ],
)
def test_parse_score_line_accepts_final_line(text: str, value: float) -> None:
    assert parse_score_line(text) == value


@pytest.mark.parametrize(
    "text", ["", "Score: 7\nthat is all", "I give it 7/10", "Score: seven", "Score: 7 or 8"]
)
def test_parse_score_line_rejects_anything_else(text: str) -> None:
    with pytest.raises(JudgeOutputError):
        parse_score_line(text)


def test_out_of_range_and_fractional_scores_are_malformed() -> None:
    with pytest.raises(JudgeOutputError, match="outside"):
        TEMPLATE.parse("Score: 11")
    with pytest.raises(JudgeOutputError, match="whole"):
        TEMPLATE.parse("Score: 6.5")


def test_malformed_output_is_retried_and_counted(openai_server) -> None:
    openai_server.push(chat_text("Looks good, 8 out of 10"), chat_text("Strengths: ...\nScore: 8"))
    result = make_judge(openai_server).grade(TEMPLATE, {"reply": "hi {x}", "checklist": "- a"})
    assert result.value == 8.0
    assert result.attempts == 2
    assert result.parse_failures == 1
    assert result.raw == ("Looks good, 8 out of 10", "Strengths: ...\nScore: 8")
    first, retry = (r.body for r in openai_server.requests)
    # braces in variables are substituted as text, not re-formatted
    assert "hi {x}" in first["messages"][1]["content"]
    # the retry shows the model its bad answer and asks again, with a new seed
    assert retry["messages"][2] == {"role": "assistant", "content": "Looks good, 8 out of 10"}
    assert "could not be read" in retry["messages"][3]["content"]
    assert retry["seed"] == first["seed"] + 1
    assert result.accounting()["judge_calls"] == 2


def test_all_attempts_malformed_gives_no_value(openai_server) -> None:
    openai_server.push(chat_text("no score"), chat_text("Score: 12"))
    result = make_judge(openai_server, attempts=2).grade(TEMPLATE, {"reply": "r", "checklist": ""})
    assert result.value is None
    assert result.parse_failures == 2
    assert result.error is not None and "outside" in result.error


def test_json_output_with_schema(openai_server) -> None:
    schema = {
        "type": "object",
        "properties": {"score": {"type": "integer"}, "reason": {"type": "string"}},
        "required": ["score", "reason"],
    }
    template = JudgeTemplate(name="j", system="s", user="u {reply}", output="json", schema=schema)
    openai_server.push(chat_text('{"score": 6, "reason": "ok"}'))
    result = make_judge(openai_server).grade(template, {"reply": "x"})
    assert result.value == 6.0
    assert result.parsed == {"score": 6, "reason": "ok"}
    sent = openai_server.requests[0].body
    assert sent["response_format"]["type"] == "json_schema"


def test_audio_modality_sends_input_audio(openai_server, tone) -> None:
    llm = create_provider("audio_llm", {"provider": "openai", "base_url": openai_server.url,
                                        "model": "omni"})  # fmt: skip
    judge = Judge(llm, modality="audio")
    openai_server.push(chat_text("Score: 5"))
    result = judge.grade(TEMPLATE, {"reply": "r", "checklist": "c"}, audio=tone)
    assert result.value == 5.0
    content = openai_server.requests[0].body["messages"][1]["content"]
    assert [part["type"] for part in content] == ["text", "input_audio"]
    assert content[1]["input_audio"]["format"] == "wav"
