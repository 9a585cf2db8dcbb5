"""A live-call run in audio mode with `audio_judge:` pointing at a loopback server: both
audio-judged speech-fidelity metrics score the recorded call, and every request carried the
recorded audio of the turn its prompt names (checked against the call's events.jsonl)."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from tests.scoring.audio_judge_helpers import PAD_S, clip_seconds
from tests.simulation.helpers import scenario, write_suite
from voxeval.audio import audio_from_bytes, read_audio
from voxeval.cli.main import app
from voxeval.config import ProviderSpec
from voxeval.providers import availability
from voxeval.scoring.call_judges import agent_speech_judge, user_speech_judge
from voxeval.simulation.timeline import Timeline

needs_espeak = pytest.mark.skipif(
    not availability("tts", ProviderSpec(provider="espeak")).available,
    reason="espeak-ng is not installed",
)
METRICS = ["task_completion", "agent_speech_fidelity", "user_speech_fidelity"]


def judge(path: str, body: dict[str, Any]) -> FakeResponse:
    """Agent turns: faithful except the greeting (turn 0); caller turns: all rated 3."""
    system, user = body["messages"][:2]
    text = next(p["text"] for p in user["content"] if p["type"] == "text")
    if system["content"].startswith(agent_speech_judge.SYSTEM):
        turn = int(re.search(r"agent turn (\d+)", text).group(1))  # type: ignore[union-attr]
        answer = {"transcript": "-", "verdict": int(turn > 0), "evidence": "-"}
    else:
        assert system["content"].startswith(user_speech_judge.SYSTEM)
        answer = {"transcript": "-", "rating": 3, "evidence": "-"}
    return chat_text(json.dumps(answer))


def clip_of(body: dict[str, Any]) -> tuple[str, int, float]:
    """(party, turn, seconds of audio) of one judge request."""
    user = body["messages"][1]
    text = next(p["text"] for p in user["content"] if p["type"] == "text")
    party, turn = re.search(r"(agent|caller) turn (\d+)", text).groups()  # type: ignore[union-attr]
    (part,) = [p for p in user["content"] if p["type"] == "input_audio"]
    audio = audio_from_bytes(base64.b64decode(part["input_audio"]["data"]))
    return party, int(turn), audio.duration


@pytest.mark.models
@needs_espeak
def test_audio_judged_metrics_score_a_recorded_audio_call(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", [scenario("book-1")])
    with FakeOpenAIServer(judge) as server:
        config = {
            "suite": str(suite),
            "systems": [{"name": "bot", "type": "scripted"}],
            "trials": 1,
            "seed": 1,
            "metrics": METRICS,
            "audio_judge": {"provider": "openai", "base_url": server.url, "model": "aj",
                            "schema_retries": 0},
            "simulation": {"caller": "scripted", "mode": "audio",
                           "caller_voice": "espeak:en-us", "agent_voice": "espeak:en-us"},
        }  # fmt: skip
        path = tmp_path / "run.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        result = CliRunner().invoke(app, ["run", str(path), "--out", str(tmp_path / "run")])
        assert result.exit_code == 0, result.output
        clips = [clip_of(r.body) for r in server.posts("/chat/completions")]
    (scores_file,) = (tmp_path / "run").rglob("scores.json")
    unit = scores_file.parent
    scores = json.loads(scores_file.read_text())
    timeline = Timeline.read_jsonl(unit / "events.jsonl")
    agent_turns = sorted({s.turn for s in timeline.speech("assistant") if not s.interrupted})
    caller_turns = sorted({s.turn for s in timeline.speech("user") if s.intended_text})
    assert len(agent_turns) >= 3 and len(caller_turns) >= 2

    agent = scores["agent_speech_fidelity"]
    assert agent["value"] == pytest.approx((len(agent_turns) - 1) / len(agent_turns))
    assert agent["passed"] is False and agent["details"]["rated_turns"] == len(agent_turns)
    assert agent["details"]["method"] == "audio_judge"
    assert agent["details"]["failed_turns"] == [0]
    caller = scores["user_speech_fidelity"]
    assert (caller["value"], caller["passed"]) == (1.0, True)
    assert caller["details"]["lowest_rating"] == 3
    assert len(clips) == len(agent_turns) + len(caller_turns)

    # each request carried the recorded audio of the turn it asked about
    for party, turn, seconds in clips:
        speaker = "assistant" if party == "agent" else "user"
        segs = [s for s in timeline.speech(speaker) if s.turn == turn and not s.backchannel]
        start, end = min(s.start for s in segs), max(s.end for s in segs)
        # the margin after the call's last turn is cut by the end of the track
        overrun = max(0.0, end + PAD_S - read_audio(unit / f"{speaker}.wav").duration)
        expected = clip_seconds(start, end) - overrun
        assert seconds == pytest.approx(expected, abs=0.02), (party, turn)


def test_an_audio_judge_makes_both_metrics_defaults(tmp_path: Path) -> None:
    """Without `metrics:`, a configured audio judge adds both metrics; a text-mode call has no
    audio, so they are not run with that reason (and the judge is never called)."""
    suite = write_suite(tmp_path / "suite", [scenario("book-1")])
    with FakeOpenAIServer(judge) as server:
        config = {
            "suite": str(suite),
            "systems": [{"name": "bot", "type": "scripted"}],
            "trials": 1,
            "audio_judge": {"provider": "openai", "base_url": server.url, "model": "aj"},
            "simulation": {"caller": "scripted", "mode": "text"},
        }
        path = tmp_path / "run.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        result = CliRunner().invoke(app, ["run", str(path), "--out", str(tmp_path / "run")])
        assert result.exit_code == 0, result.output
        assert server.posts("/chat/completions") == []
    (scores_file,) = (tmp_path / "run").rglob("scores.json")
    scores = json.loads(scores_file.read_text())
    for metric in ("agent_speech_fidelity", "user_speech_fidelity"):
        assert scores[metric]["value"] is None
        assert "text-mode call" in scores[metric]["error"]
