"""The single-turn ``pairwise`` step: per item x condition x trial, each pair of systems on
each scored metric with a direction; win rates per pair and metric over queries."""

from __future__ import annotations

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
from voxeval.cli.main import app
from voxeval.config import parse_run_config
from voxeval.protocols.contract import WorkUnit
from voxeval.protocols.single_turn_pairwise import (
    PAIRWISE,
    compare_pair,
    pairwise_comparisons,
    summarize_pairwise,
)
from voxeval.scoring.score import Score
from voxeval.store import RunStore

ITEMS = ["q1__v1__clean", "q1__v2__clean", "q2__v1__clean"]
# (wer, checklist) per item and system; None = not run
SCORES: dict[str, dict[str, tuple[float | None, float | None]]] = {
    "q1__v1__clean": {"A": (0.1, 8.0), "B": (0.3, 8.0)},  # wer: A wins; checklist: tie
    "q1__v2__clean": {"A": (0.2, 5.0), "B": (0.2, 9.0)},  # wer: tie; checklist: A loses
    "q2__v1__clean": {"A": (0.5, 7.0), "B": (0.0, None)},  # wer: A loses; checklist: skipped
}


def stored_run(tmp_path: Path, order: tuple[str, str] = ("A", "B")) -> tuple[RunStore, Any]:
    config = parse_run_config(
        {"suite": "x", "systems": [{"name": n, "type": "replay"} for n in order]}
    )
    store = RunStore(tmp_path / "run")
    for item, by_system in SCORES.items():
        for system, (wer, checklist) in by_system.items():
            scores = {
                "wer": Score(wer),
                "checklist": Score(checklist) if checklist is not None else
                Score.not_run("the judge gave no readable score"),
                "duration": Score(1.0 if system == "A" else 2.0),
            }  # fmt: skip
            store.units.complete(WorkUnit(item, system, 0, "clean", "SR"), scores)
    return store, config


def compare_all(store: RunStore, config: Any) -> list[Any]:
    units = [
        WorkUnit(r.item_id, r.system, r.trial, r.condition, r.category)
        for r in store.units.records()
    ]
    comparisons = pairwise_comparisons(config, units)
    for comparison in comparisons:
        result = compare_pair(comparison, store, ["checklist", "wer", "duration"])
        store.comparisons.save(PAIRWISE, comparison.key, comparison.unit_keys, result)
    return comparisons


def test_golden_pairwise_win_rates(tmp_path: Path) -> None:
    store, config = stored_run(tmp_path)
    comparisons = compare_all(store, config)
    assert [c.key for c in comparisons] == [f"{i}|clean|0|A|B" for i in ITEMS]
    records = store.comparisons.records(PAIRWISE)
    first = next(r for r in records if r.key == "q1__v1__clean|clean|0|A|B").result
    assert first["metrics"]["wer"] == {"a": 0.1, "b": 0.3, "better": "lower", "outcome": "win"}
    assert "duration" not in first["metrics"]  # descriptive: no side is better

    summary = summarize_pairwise(records, seed=0)
    (pair,) = summary["pairs"]
    assert (pair["a"], pair["b"]) == ("A", "B")
    wer = pair["metrics"]["wer"]
    # win, tie, loss -> (1 + 0.5 + 0) / 3
    assert wer["mean"] == pytest.approx(0.5) and wer["better"] == "lower"
    assert (wer["wins"], wer["ties"], wer["losses"], wer["n"], wer["clusters"]) == (1, 1, 1, 3, 2)
    checklist = pair["metrics"]["checklist"]
    # tie, loss -> 0.25; both on query q1: one cluster, no interval
    assert checklist["mean"] == pytest.approx(0.25) and checklist["n"] == 2
    assert checklist["clusters"] == 1 and checklist["ci_low"] is None
    assert pair["not_compared"]["checklist"]["count"] == 1
    assert (
        "B: not run (the judge gave no readable score)"
        in (pair["not_compared"]["checklist"]["reason"])
    )


def test_swapping_the_systems_gives_one_minus_the_win_rate(tmp_path: Path) -> None:
    store, config = stored_run(tmp_path, order=("B", "A"))
    compare_all(store, config)
    (pair,) = summarize_pairwise(store.comparisons.records(PAIRWISE), seed=0)["pairs"]
    assert (pair["a"], pair["b"]) == ("B", "A")
    assert pair["metrics"]["wer"]["mean"] == pytest.approx(0.5)
    assert pair["metrics"]["checklist"]["mean"] == pytest.approx(0.75)


def test_a_pending_input_score_makes_the_comparison_pending(tmp_path: Path) -> None:
    store, config = stored_run(tmp_path)
    store.scores.save(
        WorkUnit("q2__v1__clean", "B", 0, "clean", "SR"),
        {"checklist": Score.pending_retry("judge: EndpointError: HTTP 500")},
    )
    compare_all(store, config)
    record = next(r for r in store.comparisons.records() if r.key.startswith("q2__v1"))
    assert record.status == "pending" and "B checklist" in str(record.error)
    assert record.result["metrics"]["wer"]["outcome"] == "loss"  # what could be compared


# -- end to end: two cascade systems on a loopback server -----------------------------------


def tone(seconds: float, hz: float) -> Audio:
    t = np.arange(int(16000 * seconds)) / 16000
    return Audio((0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32), 16000)


SPOKEN = "Boil it for eight minutes."


class World:
    """ASR hears the same sentence in every reply; system "good" says that sentence, "bad"
    says another one, so "good" has the lower WER; the judge gives 7 to both (or fails)."""

    def __init__(self) -> None:
        self.judge_down = False

    def __call__(self, path: str, body: Any) -> FakeResponse:
        if path.endswith("/audio/transcriptions"):
            return FakeResponse(json_body={"text": SPOKEN})
        if path.endswith("/audio/speech"):
            return FakeResponse(raw=audio_to_wav_bytes(tone(0.6, 300)), content_type="audio/wav")
        model = body.get("model") if isinstance(body, dict) else None
        if model == "judge":
            return error(500, "judge down") if self.judge_down else chat_text("Fine.\nScore: 7")
        return chat_text(SPOKEN if model == "good" else "I do not know that.")


def write_two_query_suite(folder: Path) -> Path:
    queries = []
    for qid in ("q1", "q2"):
        write_audio(tone(QUERY_SECONDS, 200), folder / f"{qid}.wav")
        queries.append({"id": qid, "text": "How long do I boil an egg?", "category": "SR",
                        "audio": f"{qid}.wav", "checklist": ["Gives 6-10 minutes"]})  # fmt: skip
    (folder / "suite.yaml").write_text(
        yaml.safe_dump({"name": "two", "protocol": "single_turn", "queries": queries})
    )
    return folder


@pytest.mark.models
def test_cli_run_reports_pairwise_win_rates_and_score_completes_pending(tmp_path: Path) -> None:
    suite = write_two_query_suite(tmp_path / "suite")
    world = World()
    world.judge_down = True
    with FakeOpenAIServer(world) as server:
        remote = {"provider": "openai", "base_url": server.url, "max_retries": 0}
        systems = [
            {"name": name, "type": "cascade", "asr": remote,
             "llm": {**remote, "model": name}, "tts": remote}
            for name in ("good", "bad")
        ]  # fmt: skip
        config = {
            "suite": str(suite),
            "systems": systems,
            "judge": {**remote, "model": "judge"},
            "asr": remote,
            "metrics": ["wer", "checklist", "duration"],
            "build": {"profiles": 1, "conditions": ["clean"]},
            "scoring": {"k": 1, "judge_attempts": 1},
        }
        path = tmp_path / "cfg.yaml"
        path.write_text(yaml.safe_dump(config))
        out = tmp_path / "run"
        cli = CliRunner()
        result = cli.invoke(app, ["run", str(path), "--out", str(out)])
        assert result.exit_code == 1, result.output  # checklist scores pending
        summary = json.loads((out / "report" / "summary.json").read_text())
        assert summary["comparisons"] == {
            PAIRWISE: {"done": 0, "pending": 2, "failed": 0, "not_run": 0}
        }
        (pair,) = summary["pairwise"]["pairs"]
        assert set(pair["metrics"]) == {"wer"}  # checklist waits for its scores

        world.judge_down = False
        result = cli.invoke(app, ["score", str(out)])
        assert result.exit_code == 0, result.output
    summary = json.loads((out / "report" / "summary.json").read_text())
    done = {"done": 2, "pending": 0, "failed": 0, "not_run": 0}
    assert summary["comparisons"] == {PAIRWISE: done}
    (pair,) = summary["pairwise"]["pairs"]
    assert (pair["a"], pair["b"]) == ("good", "bad")
    wer, checklist = pair["metrics"]["wer"], pair["metrics"]["checklist"]
    assert (wer["better"], wer["mean"], wer["wins"], wer["n"]) == ("lower", 1.0, 2, 2)
    assert (checklist["mean"], checklist["ties"], checklist["n"]) == (0.5, 2, 2)
    assert "duration" not in pair["metrics"]
    files = sorted((out / "comparisons" / PAIRWISE).glob("*.json"))
    assert len(files) == 2
    markdown = (out / "report" / "summary.md").read_text()
    assert "## Pairwise" in markdown and "| good | bad | wer | lower is better | 2 | 0 | 0 |" in (
        markdown
    )
    assert "<h2>Pairwise</h2>" in (out / "report" / "index.html").read_text()


def test_golden_paired_difference_is_the_mean_of_a_minus_b(tmp_path: Path) -> None:
    store, config = stored_run(tmp_path)
    compare_all(store, config)
    (pair,) = summarize_pairwise(store.comparisons.records(PAIRWISE), seed=0)["pairs"]
    wer = pair["metrics"]["wer"]["difference"]
    # (0.1 - 0.3) + (0.2 - 0.2) + (0.5 - 0.0) over 3 common cells
    assert wer["mean"] == pytest.approx(0.1)
    assert (wer["n"], wer["clusters"]) == (3, 2)
    checklist = pair["metrics"]["checklist"]["difference"]
    assert checklist["mean"] == pytest.approx(((8.0 - 8.0) + (5.0 - 9.0)) / 2)
