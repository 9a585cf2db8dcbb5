"""End to end: `voxeval run` of a 3-dialogue multi-turn suite with a live HTTP system and a
replay system, judged by a loopback judge scripted per criterion (some answers with unknown
or missing criterion ids), all on 127.0.0.1."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text, error
from voxeval.audio import Audio, audio_to_wav_bytes, write_audio
from voxeval.cli.main import app
from voxeval.config import load_run_config
from voxeval.errors import HarnessFault
from voxeval.runner.execute import open_context
from voxeval.store import RunStore

DIALOGUES = {
    "d1": ("semantic", "understanding-memory"),
    "d2": ("paralinguistic", "paralinguistic-comprehension"),
    "d3": ("ambient", "ambient-sound-perception"),
}


def tone(seconds: float, hz: float) -> Audio:
    t = np.arange(int(16000 * seconds)) / 16000
    return Audio((0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32), 16000)


def criteria(dialogue: str) -> dict[str, Any]:
    sample = [{"id": "criteria_d_1", "text": "Does it answer the last question?"}]
    if dialogue == "d1":
        sample.append({"id": "criteria_d_2", "text": "Does it recall the first turn?"})
    sample.append({"id": "criteria_d_3", "text": "Rejected draft", "status": "rejected"})
    return {
        "general": [{"id": "criteria_s_1", "text": "Is the reply coherent?"}],
        "dimension": [{"id": "criteria_m_1", "text": "Does it notice the cue?"}],
        "sample": sample,
    }


def write_suite(root: Path) -> Path:
    rows = []
    for n, (did, (dimension, tier1)) in enumerate(DIALOGUES.items()):
        turns = []
        for k in (1, 2):
            audio = root / "suite" / "audio" / f"{did}_{k}.wav"
            write_audio(tone(0.4, 200 + 40 * n + 10 * k), audio)
            tag = "[phone ringing]" if dimension == "ambient" else "<anxious tone>"
            turns.append(
                {"transcript": f"{tag} user says {did} turn {k}", "audio": f"audio/{audio.name}"}
            )
        rows.append(
            {
                "id": did,
                "dimension": dimension,
                "scenario": "casual",
                "capability": {"tier1": tier1},
                "turns": turns,
                "rubrics": criteria(did),
            }
        )
    (root / "suite" / "dialogues.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    header = {"name": "tiny-dialogues", "protocol": "multi_turn", "dialogues": "dialogues.jsonl"}
    (root / "suite" / "suite.yaml").write_text(yaml.safe_dump(header))
    return root / "suite"


def write_replay(root: Path) -> Path:
    lines = []
    for did in DIALOGUES:
        for k in (1, 2):
            item = f"{did}.turn{k}"
            write_audio(tone(0.3, 500), root / "replay" / f"{item}.wav")
            lines.append(
                json.dumps({"item_id": item, "audio": f"{item}.wav", "text": f"recorded {item}"})
            )
    manifest = root / "replay" / "replies.jsonl"
    manifest.write_text("\n".join(lines) + "\n")
    return manifest


def criterion_value(cid: str, recorded: bool, prefix: int) -> int:
    """live meets everything; recorded meets general and sample criteria, never the dimension
    ones, and nothing on the one-turn prefix."""
    if not recorded:
        return 1
    if prefix == 1:
        return 0
    return 0 if cid.startswith("criteria_m_") else 1


class World:
    """The loopback server: an HTTP voice system and the rubric judge."""

    def __init__(self) -> None:
        self.system_posts: list[bytes] = []
        self.fail_item: str | None = None  # the live system answers 400 for this item
        self.arena_calls = 0

    def __call__(self, path: str, body: Any) -> FakeResponse:
        if path.endswith("/reply"):
            self.system_posts.append(body)
            item = re.search(rb'name="item_id"\r\n\r\n(d\d\.turn\d)', body)
            assert item is not None
            name = item.group(1).decode()
            if name == self.fail_item:
                return error(400, "bad request")
            wav = base64.b64encode(audio_to_wav_bytes(tone(0.3, 700))).decode()
            return FakeResponse(json_body={"audio": wav, "text": f"live {name}"})
        messages = body["messages"]
        prompt = messages[1]["content"]
        if messages[0]["content"].startswith("You compare two spoken dialogue systems"):
            self.arena_calls += 1  # the arena: live's dialogue always wins
            first = "A" if prompt.index("live d") < prompt.index("recorded d") else "B"
            return chat_text(json.dumps({"winner": first, "reason": "live heard the cue"}))
        ids = re.findall(r"^\s+(criteria_[smd]_\d+):", prompt, re.M)
        recorded = "recorded d" in prompt
        prefix = len(re.findall(r"^Turn \d", prompt, re.M))
        answer = {cid: criterion_value(cid, recorded, prefix) for cid in ids}
        retry = len(messages) > 2
        if recorded and prefix == 2 and not retry and "criteria_d_1" in ids:
            if "d2 turn" in prompt:
                answer["criteria_d_5"] = 1  # never listed: a parse failure
            if "d3 turn" in prompt:
                del answer["criteria_d_1"]  # missing: a parse failure
        return chat_text(json.dumps(answer))


@pytest.fixture
def world() -> Any:
    responder = World()
    with FakeOpenAIServer(responder) as server:
        yield server, responder


def write_config(root: Path, url: str, *, judge: bool = True) -> Path:
    config: dict[str, Any] = {
        "suite": str(write_suite(root)),
        "systems": [
            {"name": "live", "type": "http", "url": url + "/reply"},
            {"name": "recorded", "type": "replay", "manifest": str(write_replay(root))},
        ],
        "concurrency": 2,
        "cache_dir": str(root / "cache"),
    }
    if judge:
        config["judge"] = {"provider": "openai", "base_url": url, "model": "judge"}
    path = root / "run.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def run(config: Path, out: Path, *extra: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["run", str(config), "--out", str(out), *extra])
    assert result.exit_code == 0, result.output
    return json.loads((out / "report" / "summary.json").read_text())


def unit_dir(out: Path, dialogue: str, system: str) -> Path:
    return out / "items" / dialogue / system / "0"


def test_run_rubrics_turns_and_layout(tmp_path, world) -> None:
    server, responder = world
    out = tmp_path / "out"
    summary = run(write_config(tmp_path, server.url), out)
    assert summary["suite"]["protocol"] == "multi_turn"
    live, recorded = summary["systems"]["live"], summary["systems"]["recorded"]

    # S_case: live meets all; recorded d1 3/4 (s, d1, d2 of s, m, d1, d2), d2 and d3 2/3
    assert live["overall"]["rubric"]["mean"] == pytest.approx(1.0)
    assert recorded["overall"]["rubric"]["mean"] == pytest.approx((3 / 4 + 2 / 3 + 2 / 3) / 3)
    rub = recorded["rubric"]
    assert rub["model_score"]["mean"] == pytest.approx(100 * (3 / 4 + 2 / 3 + 2 / 3) / 3)
    assert rub["model_score"]["n"] == 3
    assert rub["by_level"]["general"]["mean"] == pytest.approx(100.0)
    assert rub["by_level"]["dimension"]["mean"] == pytest.approx(0.0)
    assert rub["by_level"]["sample"]["mean"] == pytest.approx(100.0)
    dims = rub["by_dimension"]
    assert set(dims) == {"semantic", "paralinguistic", "ambient"}
    assert dims["semantic"]["model_score"]["mean"] == pytest.approx(75.0)
    assert dims["semantic"]["by_capability"]["understanding-memory"]["mean"] == pytest.approx(75)
    assert dims["ambient"]["model_score"]["mean"] == pytest.approx(100 * 2 / 3)
    assert live["rubric"]["model_score"]["mean"] == pytest.approx(100.0)

    # turn level (general + dimension criteria): recorded T1 0, T2 (1+0)/2; live 1 throughout
    assert rub["turns"]["T1"]["mean"] == pytest.approx(0.0)
    assert rub["turns"]["T2"]["mean"] == pytest.approx(50.0)
    assert recorded["overall"]["rubric_turns"]["mean"] == pytest.approx(0.25)
    assert live["rubric"]["turns"]["T1"]["mean"] == pytest.approx(100.0)
    assert dims["paralinguistic"]["turns"]["T2"]["mean"] == pytest.approx(50.0)

    # parse failures: one unknown id (d2), one missing id (d3), each retried once
    assert recorded["judge"]["parse_failures"] == 2
    assert live["judge"]["parse_failures"] == 0
    # rubric: 3 dialogues + 2 retries; rubric_turns: 2 prefixes x 3 dialogues
    assert recorded["judge"]["calls"] == 3 + 2 + 6
    judge_usage = summary["usage"]["by_provider"]["judge"]  # live: 3 + 6 calls
    assert (judge_usage["calls"], judge_usage["parse_failures"]) == (20, 2)
    scores = json.loads((unit_dir(out, "d2", "recorded") / "scores.json").read_text())
    rubric = scores["rubric"]
    assert rubric["details"]["parse_failures"] == 1
    assert rubric["details"]["criteria"] == {
        "criteria_s_1": 1, "criteria_m_1": 0, "criteria_d_1": 1
    }  # fmt: skip
    assert rubric["details"]["by_level"] == {"general": 1.0, "dimension": 0.0, "sample": 1.0}
    turns = scores["rubric_turns"]["details"]["turns"]
    assert turns["T1"]["value"] == 0.0 and turns["T2"]["value"] == 0.5

    # the arena ran by default (two systems): 3 dialogues, both orders, live always wins
    assert summary["comparisons"]["arena"]["done"] == 3 and responder.arena_calls == 6
    ambient = summary["arena"]["dimensions"]["ambient"]
    assert ambient["elo"] == {"live": 1002.0, "recorded": 998.0}  # init 1000, K 4
    assert ambient["win_matrix"]["live"]["recorded"]["win_rate"] == 1.0

    # dialogue.json, exactly as the arena reads it
    folder = unit_dir(out, "d3", "live")
    stored = json.loads((folder / "dialogue.json").read_text())
    assert set(stored) == {"dialogue", "system", "trial", "dimension", "turns"}
    assert (stored["dialogue"], stored["system"], stored["trial"]) == ("d3", "live", 0)
    assert stored["dimension"] == "ambient"
    first = stored["turns"][0]
    assert set(first) == {
        "index", "user_text", "user_audio", "reply_text", "reply_audio", "reply_duration_s",
        "timing",
    }  # fmt: skip
    assert first["index"] == 1
    assert first["user_text"] == "[phone ringing] user says d3 turn 1"
    assert first["user_audio"] == str((tmp_path / "suite" / "audio" / "d3_1.wav").resolve())
    assert first["reply_text"] == "live d3.turn1"
    assert first["reply_audio"] == "reply_1.wav" and (folder / "reply_1.wav").is_file()
    assert first["reply_duration_s"] == pytest.approx(0.3)
    assert "wall_s" in first["timing"]
    assert not (folder / "turns.partial.json").exists()

    # the live system got the history: turn 2 carries the user's turn 1 and its own reply
    second = next(p for p in responder.system_posts if b"\r\n\r\nd3.turn2" in p)
    assert b"user says d3 turn 1" in second and b"live d3.turn1" in second
    assert b"phone ringing" not in second  # the system hears the cue; it is not told it

    # the report shows the rubric block; a second run calls nothing again
    markdown = (out / "report" / "summary.md").read_text()
    assert "### Rubric scores" in markdown and "By capability (tier 1)" in markdown
    assert "| paralinguistic | 100 " in markdown  # live's per-dimension row
    assert "Rubric scores" in (out / "report" / "index.html").read_text()
    calls = len(server.posts())
    run(write_config(tmp_path, server.url), out)
    assert len(server.posts()) == calls


def test_without_judge_rubrics_are_not_run_then_rescored(tmp_path, world) -> None:
    server, responder = world
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app, ["run", str(write_config(tmp_path, server.url, judge=False)), "--out", str(out)]
    )
    # not_run metrics are reported; without a judge the arena is not a default step, so the
    # offline run is complete
    assert result.exit_code == 0, result.output
    assert "comparisons not done" not in " ".join(result.output.split())
    summary = json.loads((out / "report" / "summary.json").read_text())
    for entry in summary["systems"].values():
        assert set(entry["not_run"]) == {"rubric", "rubric_turns"}
        assert "no judge configured" in entry["not_run"]["rubric"]
        assert "rubric" not in entry
    assert server.posts("/chat/completions") == []

    # a judge added afterwards scores the stored dialogues; the systems are not called again
    judge = tmp_path / "judge.yaml"
    judge.write_text(
        yaml.safe_dump({"judge": {"provider": "openai", "base_url": server.url, "model": "j"}})
    )
    asked = len(responder.system_posts)
    result = CliRunner().invoke(app, ["score", str(out), "--config", str(judge)])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "report" / "summary.json").read_text())
    assert summary["systems"]["live"]["rubric"]["model_score"]["mean"] == pytest.approx(100.0)
    assert summary["comparisons"]["arena"]["done"] == 3
    assert len(responder.system_posts) == asked


def test_system_fault_scores_as_failure(tmp_path, world) -> None:
    server, responder = world
    responder.fail_item = "d1.turn2"
    out = tmp_path / "out"
    summary = run(write_config(tmp_path, server.url), out, "--max-failures", "1")
    live = summary["systems"]["live"]
    assert live["units"]["system_faults"]
    # d1 failed: 0 at every level and every turn, never dropped from the mean
    assert live["rubric"]["model_score"]["mean"] == pytest.approx(200 / 3)
    assert live["rubric"]["model_score"]["n"] == 3
    assert live["rubric"]["turns"]["T1"]["mean"] == pytest.approx(200 / 3)
    folder = unit_dir(out, "d1", "live")
    fault = json.loads((folder / "system_fault.json").read_text())
    assert fault["turn"] == 2
    stored = json.loads((folder / "dialogue.json").read_text())
    assert [t["reply_text"] for t in stored["turns"]] == ["live d1.turn1", None]


def test_interrupted_unit_goes_on_from_the_first_unanswered_turn(tmp_path, world) -> None:
    server, responder = world
    config = load_run_config(write_config(tmp_path, server.url))
    ctx = open_context(config, RunStore(tmp_path / "out"))
    protocol = ctx.require_protocol()
    unit = next(u for u in protocol.plan(ctx) if u.item_id == "d2" and u.system == "live")
    system = ctx.turn_system("live")
    real = system.reply

    def flaky(history: Any) -> Any:
        if len(history) == 3:
            raise HarnessFault("our side broke mid-dialogue")
        return real(history)

    system.reply = flaky  # type: ignore[method-assign]
    with pytest.raises(HarnessFault):
        protocol.interact(unit, ctx)
    folder = ctx.store.folder.unit_dir(unit)
    partial = json.loads((folder / "turns.partial.json").read_text())
    assert [t["index"] for t in partial["turns"]] == [1]
    assert not (folder / "dialogue.json").exists()
    seen: list[Any] = []

    def recording(history: Any) -> Any:
        seen.append(list(history))
        return real(history)

    system.reply = recording  # type: ignore[method-assign]
    before = len(responder.system_posts)
    protocol.interact(unit, ctx)
    assert len(responder.system_posts) == before + 1  # only turn 2 asked again
    (history,) = seen  # user 1, its stored reply (audio read back), user 2
    assert [t.role for t in history] == ["user", "assistant", "user"]
    assert history[1].text == "live d2.turn1" and history[1].audio is not None
    assert history[2].item_id == "d2.turn2"
    stored = json.loads((folder / "dialogue.json").read_text())
    assert [t["reply_text"] for t in stored["turns"]] == ["live d2.turn1", "live d2.turn2"]
