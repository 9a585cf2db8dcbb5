"""Curation: counts at every step, two raters and labelling through a scripted OpenAI server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from voxeval.benchmarks.wildspeech.curate import LABEL_PROMPT, RATER_PROMPTS, curate
from voxeval.benchmarks.wildspeech.curate_filters import dedupe_near, looks_english, read_candidates
from voxeval.cli.main import app
from voxeval.providers.factory import create_provider

LONG = " ".join(["please"] + ["explain the history of the printing press in detail"] * 7)
ROWS: list[dict[str, Any]] = [
    {"text": "Tell me a fun fact about octopuses and their hearts", "user": "u1", "timestamp": "1"},
    {"text": "How do I fix a leaking tap in my kitchen?", "user": "u1", "timestamp": "2"},
    {"text": "Explain how vaccines train the immune system"},
    {"text": "hi"},
    {"text": "What's the weather like for hiking this weekend?"},
    {"text": "¿Cuál es la mejor manera de aprender inglés rápidamente?"},
    {"text": LONG},
    {"text": "how do I fix a leaking tap in my kitchen"},
    {"text": "How do I fix a leaky tap in my kitchen?"},
    {"conversation": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]},
    {"text": "Say something mean about my coworker", "toxic": True},
    {"text": "Write a short poem about my lazy cat"},
    {"text": "What causes the northern lights to appear?"},
]
# query -> (rater A, rater B) as (commonality, difficulty); label
SCRIPT: dict[str, tuple[tuple[int, int], tuple[int, int], str]] = {
    "How do I fix a leaking tap in my kitchen?": ((4, 6), (4, 5), "SR"),
    "Explain how vaccines train the immune system": ((4, 7), (3, 6), "II"),
    "hi": ((5, 1), (5, 1), "OE"),
    "What's the weather like for hiking this weekend?": ((4, 5), (4, 4), "II"),
    "Write a short poem about my lazy cat": ((3, 5), (4, 5), "TC"),
    "What causes the northern lights to appear?": ((4, 6), (4, 6), "II"),
}


def _responder() -> Any:
    malformed_sent: set[str] = set()

    def answer(path: str, body: Any) -> FakeResponse:
        prompt = (
            body["messages"][-1]["content"]
            if len(body["messages"]) == 1
            else body["messages"][0]["content"]
        )
        query = prompt.rsplit("Query: ", 1)[1].strip()
        rater_a, rater_b, label = SCRIPT[query]
        if prompt.startswith(LABEL_PROMPT[:30]):
            return chat_text(json.dumps({"category": label, "subcategory": None}))
        if "poem" in query and query not in malformed_sent:
            malformed_sent.add(query)
            return chat_text("I think commonality is 3 and difficulty 5.")  # not JSON: retried
        c, d = rater_a if prompt.startswith(RATER_PROMPTS[0][:20]) else rater_b
        return chat_text(json.dumps({"commonality": c, "difficulty": d}))

    return answer


def _input(tmp_path: Path) -> Path:
    path = tmp_path / "queries.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


def test_deterministic_steps_without_a_judge(tmp_path: Path) -> None:
    report = curate(_input(tmp_path))
    kept = {s["step"]: s["kept"] for s in report.table()}
    assert kept["loaded"] == 13
    assert kept["non-toxic (row flag)"] == 12
    assert kept["single-turn"] == 11
    assert kept["English"] == 10
    assert kept["fewer than 50 words"] == 9
    assert kept["latest query per user"] == 8
    assert kept["exact duplicates removed"] == 7
    assert kept["near duplicates removed"] == 6
    not_run = [s for s in report.table() if not s["ran"]]
    assert {s["step"] for s in not_run} >= {"category labelling", "rebalancing"}
    assert all("no judge endpoint" in s["note"] for s in not_run)
    assert report.llm_calls == 0


def test_llm_steps_with_scripted_raters(tmp_path: Path, openai_server: FakeOpenAIServer) -> None:
    openai_server.responder = _responder()
    llm = create_provider(
        "llm", {"provider": "openai", "base_url": openai_server.url, "model": "m"}
    )
    report = curate(_input(tmp_path), [llm], per_category=1, seed=0)
    kept = {s["step"]: s["kept"] for s in report.table()}
    assert kept["two LLM raters (difficulty >= 5, commonality >= 3)"] == 4
    assert kept["category labelling"] == 4
    assert kept["rebalancing (<= 1 per category)"] == 3
    assert sorted(c.category or "" for c in report.kept) == ["II", "SR", "TC"]
    assert report.llm_calls == 6 * 2 + 4
    assert len(openai_server.requests) == 6 * 2 + 4 + 1  # one malformed answer was retried
    assert report.kept[0].ratings[0] == {"commonality": 4, "difficulty": 6}


def test_cli_curate_writes_suite_rows(tmp_path: Path, openai_server: FakeOpenAIServer) -> None:
    openai_server.responder = _responder()
    judge = tmp_path / "judge.yaml"
    judge.write_text(
        yaml.safe_dump(
            {"judge": {"provider": "openai", "base_url": openai_server.url, "model": "m"}}
        )
    )
    out = tmp_path / "curated.jsonl"
    result = CliRunner().invoke(
        app,
        ["curate", str(_input(tmp_path)), "-o", str(out), "--judge-config", str(judge), "--json"],
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout[result.stdout.index("{") :])
    assert summary["kept"] == 4
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {r["category"] for r in rows} == {"SR", "II", "TC"}
    assert all(len(r["metadata"]["ratings"]) == 2 for r in rows)


def test_language_heuristic_and_near_duplicates(tmp_path: Path) -> None:
    assert looks_english("Can you recommend a good book for my father?")
    assert not looks_english("Quelle est la meilleure façon de cuisiner le riz?")
    assert not looks_english("Wie kann ich mein Passwort ändern und was ist das Problem?")
    assert not looks_english("Как приготовить борщ?")
    path = tmp_path / "q.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"text": t})
            for t in ["Best pizza in Rome?", "best pizza in rome!!", "Best pizzas in Rome?"]
        )
    )
    assert len(dedupe_near(read_candidates(path))) == 1


def _judge_config(tmp_path: Path, url: str) -> Path:
    judge = tmp_path / "judge.yaml"
    judge.write_text(
        yaml.safe_dump(
            {"judge": {"provider": "openai", "base_url": url, "model": "m", "max_retries": 1,
                       "backoff_base_s": 0.01, "backoff_max_s": 0.02}}
        )
    )  # fmt: skip
    return judge


def test_cli_curate_with_unreachable_raters_fails_and_says_so(tmp_path: Path) -> None:
    """An unreachable endpoint stops at its first call: exit 3, nothing written, the failed
    call named (not 20 calls retried for minutes, then exit 0 with filter drops)."""
    out = tmp_path / "curated.jsonl"
    judge = _judge_config(tmp_path, "http://127.0.0.1:9/v1")
    args = ["curate", str(_input(tmp_path)), "-o", str(out), "--judge-config", str(judge)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 3, result.output
    text = " ".join(result.output.split())
    assert "the rater endpoint could not be reached" in text and "nothing was written" in text
    assert not out.exists()
    as_json = CliRunner().invoke(app, [*args, "--json"])
    assert as_json.exit_code == 3
    summary = json.loads(as_json.stdout[as_json.stdout.index("{") : as_json.stdout.rindex("}") + 1])
    assert summary["llm_failures"] == 1 and summary["unreachable"]
    assert summary["failed_calls"][0]["step"].startswith("two LLM raters")
    rating = next(s for s in summary["steps"] if s["step"].startswith("two LLM raters"))
    assert not rating["ran"] and rating["dropped"] == 0
    assert rating["note"].startswith("the rater endpoint is unreachable: ")


def test_cli_curate_lists_failed_rater_calls_and_exits_1(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    scripted = _responder()

    def answer(path: str, body: Any) -> FakeResponse:
        if "northern lights" in json.dumps(body):
            return FakeResponse(status=400, json_body={"error": {"message": "content refused"}})
        return scripted(path, body)

    openai_server.responder = answer
    out = tmp_path / "curated.jsonl"
    args = ["curate", str(_input(tmp_path)), "-o", str(out), "--judge-config",
            str(_judge_config(tmp_path, openai_server.url)), "--json"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    summary = json.loads(result.stdout[result.stdout.index("{") : result.stdout.rindex("}") + 1])
    (failed,) = summary["failed_calls"]
    assert "content refused" in failed["error"] and failed["step"].startswith("two LLM raters")
    rating = next(s for s in summary["steps"] if s["step"].startswith("two LLM raters"))
    assert (rating["kept"], rating["dropped"]) == (3, 2)  # 6 rated: 2 dropped by rule, 1 failed
    assert "1 failed calls, not judged" in rating["note"]
    assert "1 rater calls failed" in " ".join(result.output.split())
    assert summary["kept"] == 3 and out.exists()
