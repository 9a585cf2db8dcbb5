"""Single-turn faults end to end, all on 127.0.0.1: a system that fails on a third of the
items scores exactly like one that answers those items uselessly; a judge that is down
leaves scores pending (exit 1) until a later run completes them without calling the
systems; a re-score with a failing judge never replaces good scores."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text, error
from tests.support.query_clips import QUERY_SECONDS
from voxeval.audio import Audio, audio_to_wav_bytes, write_audio

GOOD_TEXT, USELESS_TEXT = "Yes, it opens at nine.", "I do not know."
ITEMS = ("q1", "q2", "q3")
FAILING_ITEM = "q3"  # the fixed third of the suite where the systems fail


def tone(seconds: float, hz: float) -> Audio:
    t = np.arange(int(16000 * seconds)) / 16000
    return Audio((0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32), 16000)


GOOD, USELESS = tone(0.5, 300), tone(1.5, 500)  # the ASR tells them apart by size


def wav_reply(audio: Audio, text: str) -> FakeResponse:
    wav = base64.b64encode(audio_to_wav_bytes(audio)).decode()
    return FakeResponse(json_body={"audio": wav, "text": text})


class World:
    """Voice systems, a scoring ASR and a judge behind one loopback server.

    ``/crashing``: HTTP 500 on the failing item; ``/slow``: answers the failing item after
    the system's timeout; ``/useless``: a useless spoken answer to it. All answer the other
    items well. The judge gives 8 to a good answer and 1 (the scale minimum) to a useless
    one, or HTTP 500 while ``judge_down``."""

    def __init__(self) -> None:
        self.system_calls = 0
        self.judge_down = False

    def __call__(self, path: str, body: Any) -> FakeResponse:
        if path.endswith(("/crashing", "/slow", "/useless")):
            self.system_calls += 1
            if f"{FAILING_ITEM}__".encode() not in body:
                return wav_reply(GOOD, GOOD_TEXT)
            if path.endswith("/crashing"):
                return error(500, "internal server error")
            if path.endswith("/slow"):
                return FakeResponse(delay_s=1.5, json_body={})
            return wav_reply(USELESS, USELESS_TEXT)
        if path.endswith("/audio/transcriptions"):
            return FakeResponse(
                json_body={"text": GOOD_TEXT if len(body) < 30000 else USELESS_TEXT}
            )
        if self.judge_down:
            return error(500, "judge overloaded")
        return chat_text("Score: 8" if GOOD_TEXT in body["messages"][1]["content"] else "Score: 1")


@pytest.fixture
def world() -> Any:
    responder = World()
    with FakeOpenAIServer(responder) as server:
        yield server, responder


def write_config(tmp_path: Path, url: str, systems: list[str]) -> Path:
    queries = []
    for n, qid in enumerate(ITEMS):
        write_audio(tone(QUERY_SECONDS, 200 + 40 * n), tmp_path / "suite" / f"{qid}.wav")
        queries.append(
            {"id": qid, "text": "Is the shop open tomorrow?", "category": "II",
             "audio": f"{qid}.wav", "checklist": ["Says whether it opens"],
             "assertions": [{"kind": "require_any", "values": ["nine"]}]}
        )  # fmt: skip
    suite = {"name": "three", "protocol": "single_turn", "queries": queries}
    (tmp_path / "suite" / "suite.yaml").write_text(yaml.safe_dump(suite))
    config = {
        "suite": str(tmp_path / "suite"),
        "systems": [
            {"name": name, "type": "http", "url": f"{url}/{name}", "timeout_s": 0.5}
            for name in systems
        ],
        "judge": {"provider": "openai", "base_url": url, "model": "judge", "max_retries": 0},
        "asr": {"provider": "openai", "base_url": url},
        "metrics": ["checklist", "assertions", "wer", "duration"],
        "build": {"profiles": 1, "conditions": ["clean"]},
        "cache_dir": str(tmp_path / "cache"),
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def summary(out: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out / "report" / "summary.json").read_text())
    return data


def run(*args: str) -> Any:
    from voxeval.cli.main import app

    return CliRunner().invoke(app, list(args))


@pytest.mark.models
def test_a_crashing_system_scores_like_one_that_fails_those_items(tmp_path, world) -> None:
    server, _ = world
    config = write_config(tmp_path, server.url, ["crashing", "slow", "useless"])
    out = tmp_path / "out"
    result = run("run", str(config), "--out", str(out))
    assert result.exit_code == 1, result.output  # two units are system faults
    systems = summary(out)["systems"]
    crashing, slow, useless = systems["crashing"], systems["slow"], systems["useless"]
    for metric in ("checklist", "assertions"):
        assert crashing["overall"][metric] == useless["overall"][metric], metric
        assert slow["overall"][metric] == useless["overall"][metric], metric
    assert useless["overall"]["checklist"]["mean"] == pytest.approx((8 + 8 + 1) / 3)
    assert useless["overall"]["assertions"]["mean"] == pytest.approx(2 / 3)
    assert crashing["units"]["system_faults"] == {"exception": 1}
    assert slow["units"]["system_faults"] == {"timeout": 1}
    assert useless["units"]["system_faults"] == {}
    # a descriptive metric has no worst value: it is not run, counted, never silently dropped
    assert crashing["overall"]["duration"]["n"] == 2
    assert crashing["partial"]["duration"] == {"not_run": 1, "reason": "system fault: exception"}
    unit = next((out / "items").glob(f"{FAILING_ITEM}__*/crashing/0"))
    reply = json.loads((unit / "reply.json").read_text())
    assert reply["system_fault"]["cause"] == "exception"
    assert "HTTP 500" in reply["system_fault"]["message"]
    assert not (unit / "assistant.wav").exists()
    scores = json.loads((unit / "scores.json").read_text())
    assert scores["checklist"]["value"] == 1.0
    assert scores["checklist"]["details"]["system_fault"] == "exception"
    tolerated = run("report", str(out), "--max-failures", "2")
    assert tolerated.exit_code == 0, tolerated.output


@pytest.mark.models
def test_a_judge_that_is_down_leaves_pending_scores_that_a_later_run_completes(
    tmp_path, world
) -> None:
    server, responder = world
    config = write_config(tmp_path, server.url, ["useless"])
    out = tmp_path / "out"
    responder.judge_down = True
    result = run("run", str(config), "--out", str(out))
    assert result.exit_code == 1, result.output
    assert "pending: 3 scores" in result.output
    useless = summary(out)["systems"]["useless"]
    assert useless["units"]["pending_metrics"] == 3 and useless["units"]["done"] == 3
    assert "checklist" not in useless["overall"]
    assert "judge overloaded" in useless["not_run"]["checklist"]
    assert useless["overall"]["assertions"]["n"] == 3  # the other metrics are in
    unit = next((out / "items").glob("q1__*/useless/0"))
    assert json.loads((unit / "scores.json").read_text())["checklist"]["pending"] is True
    assert responder.system_calls == 3

    responder.judge_down = False
    result = run("run", str(config), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert responder.system_calls == 3  # only the pending scores were computed
    useless = summary(out)["systems"]["useless"]
    assert useless["overall"]["checklist"]["mean"] == pytest.approx((8 + 8 + 1) / 3)
    assert useless["units"]["pending_metrics"] == 0
    good = useless["overall"]["checklist"]

    # A re-score with a new judge that fails keeps every good score and says so (exit 1).
    responder.judge_down = True
    new_judge = tmp_path / "judge.yaml"
    judge_2 = {"provider": "openai", "base_url": server.url, "model": "judge-2", "max_retries": 0}
    new_judge.write_text(yaml.safe_dump({"judge": judge_2}))
    result = run("score", str(out), "--metrics", "checklist", "--config", str(new_judge))
    assert result.exit_code == 1, result.output
    assert "kept 3 stored scores" in result.output
    assert summary(out)["systems"]["useless"]["overall"]["checklist"] == good
    assert json.loads((unit / "scores.json").read_text())["checklist"]["value"] == 8.0
    assert responder.system_calls == 3
