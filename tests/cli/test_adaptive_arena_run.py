"""Adaptive pairing on a fresh run, end to end: a released model-outputs file with 30
dialogues and 7 models becomes a suite with 7 replay systems, ``voxeval run`` judges it with
``pairing: adaptive`` and a loopback judge, and every system ends up rated.

Before pairs were chosen as verdicts arrived, every dialogue of a fresh run drew among the
first 3 pairs by name (all ratings equal): all 30 comparisons involved one system and 3 of
the 7 were never compared, missing from the ratings without a word."""

from __future__ import annotations

import json
import re
import zlib
from pathlib import Path
from typing import Any

from tests.cli.arena_release import run_release, shown_models
from tests.fakes.openai_server import FakeResponse, chat_text

# the judge's preference: a higher strength wins, except on one dialogue in four
STRENGTH = {
    "Doubao": 3, "GLM4-Voice": 2, "GPT-4o": 7, "MiniCPM-o": 4, "Moshi": 1, "Qwen-Omni": 6,
    "VITA": 5,
}  # fmt: skip
DIALOGUES = 30


def judge(path: str, body: dict[str, Any]) -> FakeResponse:
    a, b = shown_models(body, list(STRENGTH))
    number = re.search(r"to (\d+-\d+)", body["messages"][1]["content"])
    assert number is not None
    upset = zlib.crc32(number.group(1).encode()) % 4 == 0
    winner = "A" if (STRENGTH[a] > STRENGTH[b]) != upset else "B"
    return chat_text(json.dumps({"winner": winner, "reason": "better"}))


def test_thirty_dialogues_and_seven_replay_systems_rate_all_seven(tmp_path: Path) -> None:
    result, out, requests = run_release(
        tmp_path, list(STRENGTH), DIALOGUES, judge, {"pairing": "adaptive", "resamples": 200}
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "report" / "summary.json").read_text(encoding="utf-8"))
    semantic = summary["arena"]["dimensions"]["semantic"]
    assert semantic["comparisons"]["done"] == DIALOGUES  # one pair per dialogue
    assert requests == 2 * DIALOGUES  # both orders
    assert semantic["unrated"] == {}
    assert set(semantic["bt"]["systems"]) == set(STRENGTH)
    assert set(semantic["elo"]) == set(STRENGTH)
    assert all(s["battles"] >= 1 for s in semantic["bt"]["systems"].values())
    assert "ratings_note" not in semantic  # the battles link all 7
    # planned in rounds: one "comparing" line per batch of 4 dialogues
    assert result.output.count("comparing:") == -(-DIALOGUES // 4)
