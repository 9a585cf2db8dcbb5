"""The reference protocol mode of the arena (``scoring.arena.protocol: reference``): one
seeded order per comparison and one request per comparison, verdicts limited to A or B
(a tie is skipped and counted), online Elo K 4 in judging order equal to a hand replay, the
dataset's own arena prompt sent as the reference sends it, and the mode named in the
summary and the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from tests.protocols.arena.arena_runs import arena_context, preferring_judge, shown_sides
from voxeval.api.context import RunContext
from voxeval.protocols.arena.judgements import arena_judgements
from voxeval.protocols.arena.multi_turn_arena import (
    arena_comparisons,
    arena_options,
    compare_arena,
    summarize_arena,
)
from voxeval.protocols.comparison import Comparison
from voxeval.report.markdown import render_markdown

REPLIES = {
    ("d1", "alpha"): ["good"], ("d1", "beta"): ["poor"], ("d1", "gamma"): ["good too"],
    ("d2", "alpha"): ["poor"], ("d2", "beta"): ["good"], ("d2", "gamma"): ["poor"],
    ("d3", "alpha"): ["good"], ("d3", "beta"): ["poor"], ("d3", "gamma"): ["poor"],
}  # fmt: skip
REFERENCE = {"protocol": "reference", "mode": "transcript", "pairing": "all"}


def model_labels(path: str, body: dict[str, Any]) -> FakeResponse:
    """The preferring judge, answering as the reference's prompt asks: "Model A"/"Model B";
    a tie stays "tie" (the reference skips it)."""
    verdict = json.loads(preferring_judge(path, body).json_body["choices"][0]["message"]["content"])
    winner = {"A": "Model A", "B": "Model B"}.get(verdict["winner"], verdict["winner"])
    return chat_text(json.dumps({"winner": winner, "reason": verdict["reason"]}))


def _hand_elo(verdicts: list[tuple[str, str, float]]) -> dict[str, float]:
    ratings = {"alpha": 1000.0, "beta": 1000.0, "gamma": 1000.0}
    for a, b, score_a in verdicts:
        expected_a = 1 / (1 + 10 ** ((ratings[b] - ratings[a]) / 400))
        ratings[a] += 4 * (score_a - expected_a)
        ratings[b] += 4 * ((1 - score_a) - (1 - expected_a))
    return ratings


def test_reference_defaults_follow_the_paper() -> None:
    from voxeval.config import RunConfig

    config = RunConfig(
        suite="x",
        systems=[{"name": n, "type": "scripted"} for n in ("a", "b")],
        scoring={"arena": {"protocol": "reference"}},
    )
    options = arena_options(config)
    assert (options.protocol, options.mode, options.pairing) == ("reference", "audio", "adaptive")
    default = arena_options(config.model_copy(update={"scoring": {}}))
    assert (default.protocol, default.mode, default.pairing) == ("both_orders", "transcript", "all")


def test_one_request_per_comparison_and_elo_in_judging_order(tmp_path: Path) -> None:
    with FakeOpenAIServer(model_labels) as server:
        ctx, units = arena_context(tmp_path, REPLIES, judge_url=server.url, arena=REFERENCE)
        comparisons = arena_comparisons(ctx, units)
        # judged in an order unlike the keys' (last planned first)
        judged = list(reversed(comparisons))
        _run(ctx, judged)
        requests = server.posts("/chat/completions")
    assert len(comparisons) == 9 and len(requests) == 9  # one request per comparison
    results = {r.key: r.result for r in ctx.store.comparisons.records("arena")}
    verdicts, skipped = [], 0
    for comparison, request in zip(judged, requests, strict=True):
        result = results[comparison.key]
        # the one order judged is the planned one: model A is the comparison's first unit
        (order,) = result["orders"]
        assert order["shown_a"] == comparison.units[0].system == result["a"]
        a_text, b_text = shown_sides(request.body)
        assert ("good" in a_text, "good" in b_text) == (
            "good" in " ".join(REPLIES[(comparison.units[0].item_id, order["shown_a"])]),
            "good" in " ".join(REPLIES[(comparison.units[0].item_id, order["shown_b"])]),
        )
        if result["skipped"]:
            skipped += 1
            assert result["winner"] is None and order["label"] == "tie"
            continue
        verdicts.append((result["a"], result["b"], 1.0 if result["winner"] == result["a"] else 0.0))
    # d1 alpha~gamma both good: a tie, skipped; the judge answers "Model A" for a pair where
    # both are poor (d2 alpha~gamma, d3 beta~gamma): a verdict, as the reference takes it
    summary = summarize_arena(ctx)
    dims = summary["dimensions"]["ambient"]
    assert summary["protocol"] == "reference" and summary["elo_order"] == "judging"
    assert dims["comparisons"]["skipped"] == skipped == 1
    assert dims["n_battles"] == 8 and dims["ties"] == 0
    expected = _hand_elo(verdicts)
    for name, rating in expected.items():
        assert dims["elo"][name] == pytest.approx(rating, abs=1e-9)
    # a replay in key order differs: the judging order is what the ratings followed
    by_key = _hand_elo(
        [v for _, v in sorted(zip([c.key for c in judged if not results[c.key]["skipped"]],
                                  verdicts, strict=True))]
    )  # fmt: skip
    assert by_key != pytest.approx(expected, abs=1e-9)
    markdown = render_markdown({"systems": {}, "arena": summary})
    assert "Protocol mode reference" in markdown
    # the bias analyses read the 8 verdicts given, not the skipped one
    judgements = arena_judgements(ctx.store)
    assert len(judgements) == 8 and all(j.winner in ("alpha", "beta", "gamma") for j in judgements)


def _run(ctx: RunContext, comparisons: list[Comparison]) -> None:
    for comparison in comparisons:
        result = compare_arena(comparison, ctx)
        ctx.store.comparisons.save(comparison.step, comparison.key, comparison.unit_keys, result)


@pytest.mark.models
def test_reference_run_uses_the_dataset_prompts_with_audio(tmp_path: Path) -> None:
    """A dataset-layout release run in reference mode for both the arena and the rubric: every
    request is the dataset's own prompt with the dialogue audio and no system message; one
    request per comparison, two rubric calls (general, sample) per dialogue."""
    import base64
    import io
    import re

    import numpy as np
    import soundfile as sf
    import yaml
    from typer.testing import CliRunner

    from tests.benchmarks.mtalk_fixtures import GENERAL_PROMPT, SPECIFIC_PROMPT, write_dataset_jsonl
    from voxeval.cli.main import app

    arena_prompt = "Compare the two dialogues and pick the better one."
    general, sample = GENERAL_PROMPT.strip(), SPECIFIC_PROMPT.strip()  # as the import keeps them

    def judge(path: str, body: dict[str, Any]) -> FakeResponse:
        (message,) = body["messages"]  # the prompt alone, as the reference sends it
        text, sound = message["content"]
        if text["text"] == arena_prompt:
            return chat_text(json.dumps({"winner": "Model B", "reason": "B listened"}))
        assert text["text"] in (general, sample)
        ids = sorted(set(re.findall(r"criteria_[smd]_\d+", text["text"])))
        samples, rate = sf.read(io.BytesIO(base64.b64decode(sound["input_audio"]["data"])))
        heard = np.abs(np.fft.rfft(samples))
        freqs = np.fft.rfftfreq(samples.size, 1 / rate)
        gpt = heard[np.abs(freqs - 215) < 3].max() > heard[np.abs(freqs - 230) < 3].max()
        return chat_text(json.dumps({c: int(gpt or c.startswith("criteria_s_")) for c in ids}))

    runner = CliRunner()
    suite = tmp_path / "suite"
    release = write_dataset_jsonl(tmp_path / "release")
    assert runner.invoke(app, ["mtalk-suite", str(release), "-o", str(suite)]).exit_code == 0
    snippet = yaml.safe_load((suite / "systems.yaml").read_text(encoding="utf-8"))
    with FakeOpenAIServer(judge) as server:
        config = {
            "suite": ".",
            **snippet,
            "audio_judge": {"provider": "openai", "base_url": server.url, "model": "hears"},
            "scoring": {
                "arena": {"protocol": "reference", "resamples": 20},
                "rubric": {"protocol": "reference"},
            },
            "metrics": ["rubric"],
            "comparisons": ["arena"],
            "cache_dir": str(tmp_path / "cache"),
        }
        (suite / "run.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        out = tmp_path / "run"
        result = runner.invoke(app, ["run", str(suite / "run.yaml"), "--out", str(out)])
        requests = server.posts("/chat/completions")
    assert result.exit_code == 1, result.output  # amb-9-1 has no released replies
    texts = [r.body["messages"][0]["content"][0]["text"] for r in requests]
    # para-2-3: one arena request, and per model one general and one sample call
    assert sorted(texts) == sorted([arena_prompt, *[general, sample] * 2])
    summary = json.loads((out / "report" / "summary.json").read_text(encoding="utf-8"))
    arena = summary["arena"]
    assert (arena["protocol"], arena["mode"], arena["pairing"]) == (
        "reference",
        "audio",
        "adaptive",
    )
    para = arena["dimensions"]["paralinguistic"]
    (record,) = [
        json.loads(p.read_text())["result"] for p in (out / "comparisons" / "arena").glob("*.json")
        if json.loads(p.read_text())["status"] == "done"
    ]  # fmt: skip
    assert record["prompt"] == "dataset" and record["winner"] == record["b"]
    assert para["elo"] == {record["b"]: 1002.0, record["a"]: 998.0}
    gpt, qwen = summary["systems"]["GPT-4o"], summary["systems"]["Qwen-Omni"]
    assert gpt["rubric"]["model_score"]["mean"] == pytest.approx(100.0)
    assert qwen["rubric"]["model_score"]["mean"] == pytest.approx(100 * 2 / 5)
    assert qwen["rubric"]["protocol"] == "reference"
    scores = json.loads(
        (out / "items" / "para-2-3" / "Qwen-Omni" / "0" / "scores.json").read_text()
    )
    assert scores["rubric"]["details"]["calls"] == {"general": "dataset", "sample": "dataset"}
    assert scores["rubric"]["details"]["judge_requests"] == 2
    markdown = (out / "report" / "summary.md").read_text(encoding="utf-8")
    assert "Protocol mode reference" in markdown and "protocol reference" in markdown
