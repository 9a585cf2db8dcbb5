"""``voxeval judges calibrate`` end to end against a loopback OpenAI-compatible judge: a judge
scripted to always answer "pass" gets the share of clean examples as accuracy and kappa 0; a
judge scripted with the right answers gets accuracy 1; judge failures and parse failures are
counted; an unreachable judge exits non-zero; config files in both forms."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from voxeval.calibration.dev_set import CalibrationExample, build_dev_set
from voxeval.calibration.metric_labels import METRIC_LABELS
from voxeval.cli.main import app
from voxeval.scoring.call_judges import (
    conciseness,
    conversation_progression,
    faithfulness,
    speakability,
)
from voxeval.scoring.call_judges.call_conversation import call_conversation

runner = CliRunner()
# schema_retries 0: every malformed answer reaches the Judge's own (counted) retry loop
FAST = {
    "timeout_s": 5.0,
    "max_retries": 0,
    "backoff_base_s": 0.001,
    "backoff_max_s": 0.002,
    "schema_retries": 0,
}
# the judged metrics registered in this installation that the loopback judge can answer
METRICS = ["faithfulness", "conversation_progression", "conciseness", "speakability"]
SYSTEMS = {
    faithfulness.SYSTEM: "faithfulness",
    conversation_progression.SYSTEM: "conversation_progression",
    conciseness.SYSTEM: "conciseness",
    speakability.SYSTEM: "speakability",
}
PER_DEFECT, SEED = 1, 5
Answer = Callable[[str, str, CalibrationExample | None], dict[str, Any]]


def flat(text: str) -> str:
    """Console output with its line wrapping undone."""
    return " ".join(text.split())


def write_spec(tmp_path: Path, server: FakeOpenAIServer, *, wrapped: bool = False) -> Path:
    spec = {"provider": "openai", "base_url": server.url, "model": "judge", **FAST}
    path = tmp_path / ("run.yaml" if wrapped else "judge.yaml")
    data = {"suite": "clinic-calls", "systems": [], "judge": spec} if wrapped else spec
    path.write_text(yaml.safe_dump(data))
    return path


def request_parts(body: Any) -> tuple[str, str]:
    messages = body["messages"]
    return str(messages[0]["content"]), str(messages[1]["content"])


def rated_turns(metric: str, user: str) -> list[int]:
    block = user.split("Rate each of these agent turns:")[-1] if metric == "conciseness" else user
    return sorted({int(n) for n in re.findall(r"\[agent turn (\d+)\]", block)})


def pass_answer(metric: str, user: str, example: CalibrationExample | None) -> dict[str, Any]:
    if metric in ("faithfulness", "conversation_progression"):
        names = METRIC_LABELS[metric].dimensions
        return {"dimensions": {n: {"rating": 3, "evidence": "fine"} for n in names}}
    turns = rated_turns(metric, user)
    if metric == "conciseness":
        return {"turns": [{"turn": t, "rating": 3, "failure_tags": []} for t in turns]}
    return {"turns": [{"turn": t, "speakable": 1, "reason": ""} for t in turns]}


def right_answer(metric: str, user: str, example: CalibrationExample | None) -> dict[str, Any]:
    """What a perfect judge says: the expected labels, in the metric's answer format."""
    assert example is not None, f"no example matches the {metric} prompt"
    flagged = example.expected.defect
    if metric in ("faithfulness", "conversation_progression"):
        dims = example.expected.dimensions
        return {
            "dimensions": {
                n: {"rating": 1 if dims.get(n) else 3, "evidence": "quoted"}
                for n in METRIC_LABELS[metric].dimensions
            }
        }
    turns = rated_turns(metric, user)
    if metric == "conciseness":
        tags = ["verbosity_or_filler", "over_enumeration"] if flagged else []
        rating = 1 if flagged else 3
        return {"turns": [{"turn": t, "rating": rating, "failure_tags": tags} for t in turns]}
    bad = example.edit.get("turn") if flagged else None
    return {
        "turns": [
            {"turn": t, "speakable": 0 if t == bad else 1, "reason": "markup" if t == bad else ""}
            for t in turns
        ]
    }


def example_finder() -> Callable[[str, str], CalibrationExample | None]:
    """The example a prompt is about: the one whose judge view (transcript, or the agent
    turns for speakability) the prompt quotes, the longest such view winning."""
    examples = build_dev_set(METRICS, per_defect=PER_DEFECT, seed=SEED, min_items=1).examples

    def view(example: CalibrationExample) -> str:
        conv = call_conversation(example.record)
        assert conv is not None
        return conv.agent_turns_text() if example.metric == "speakability" else conv.transcript

    views = [(view(e), e) for e in examples]

    def find(metric: str, user: str) -> CalibrationExample | None:
        found = [(len(v), e) for v, e in views if e.metric == metric and v in user]
        return max(found, key=lambda item: item[0])[1] if found else None

    return find


@pytest.fixture(scope="module")
def find() -> Callable[[str, str], CalibrationExample | None]:
    return example_finder()


def scripted(
    answer: Answer, find: Callable[[str, str], CalibrationExample | None]
) -> Callable[[str, Any], FakeResponse]:
    def respond(path: str, body: Any) -> FakeResponse:
        system, user = request_parts(body)
        metric = SYSTEMS[system]
        return chat_text(json.dumps(answer(metric, user, find(metric, user))))

    return respond


@pytest.fixture
def server_for() -> Iterator[Callable[..., FakeOpenAIServer]]:
    servers: list[FakeOpenAIServer] = []

    def make(responder: Callable[[str, Any], FakeResponse]) -> FakeOpenAIServer:
        server = FakeOpenAIServer(responder).start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()


def calibrate(tmp_path: Path, config: Path, *extra: str) -> Any:
    args = ["judges", "calibrate", "--judge", str(config), "--per-defect", str(PER_DEFECT)]
    args += ["--min-items", "1"]
    args += ["--seed", str(SEED), "--metrics", ",".join(METRICS), "--out", str(tmp_path / "out")]
    return runner.invoke(app, [*args, "--json", *extra])


def test_a_judge_that_always_passes_gets_the_clean_share_and_kappa_zero(
    tmp_path: Path, server_for: Callable[..., FakeOpenAIServer], find: Any
) -> None:
    server = server_for(scripted(pass_answer, find))
    result = calibrate(tmp_path, write_spec(tmp_path, server))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report["metrics"]) == set(METRICS)
    for metric, stats in report["metrics"].items():
        assert stats["judge_failures"] == 0 and stats["parse_failures"] == 0
        assert 0 < stats["base_rate"] < 1, metric
        assert stats["accuracy"] == pytest.approx(1 - stats["base_rate"]), metric
        assert stats["kappa"] == 0.0 and stats["f1"] == 0.0, metric
        for name, dim in stats["dimensions"].items():
            assert dim["positives"] == 0 or dim["kappa"] == 0.0, (metric, name)
    faith = report["metrics"]["faithfulness"]
    assert faith["positives"] == 3 * PER_DEFECT  # three faithfulness defects
    assert faith["dimensions"]["policy_violations"]["positives"] == PER_DEFECT
    # every example's answer is kept
    answers = (tmp_path / "out" / "answers.jsonl").read_text().splitlines()
    assert len(answers) == sum(s["examples"] for s in report["metrics"].values())
    row = json.loads(answers[0])
    assert row["score"]["details"]["judge_calls"] == 1 and row["expected"]["defect"] is False
    assert json.loads((tmp_path / "out" / "calibration.json").read_text()) == report


def test_a_judge_with_the_right_answers_gets_accuracy_one(
    tmp_path: Path, server_for: Callable[..., FakeOpenAIServer], find: Any
) -> None:
    server = server_for(scripted(right_answer, find))
    result = calibrate(tmp_path, write_spec(tmp_path, server, wrapped=True), "--concurrency", "3")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    for metric, stats in report["metrics"].items():
        assert stats["accuracy"] == 1.0 and stats["kappa"] == pytest.approx(1.0), metric
        assert stats["f1"] == 1.0, metric
        # issue 37.6: a perfect judge on a tiny set still gets an honest kappa interval, and
        # the report says the set cannot tell a fit judge from an unfit one
        low, high = stats["kappa_ci"]
        assert high == pytest.approx(1.0) and low < 0.6, metric
        assert stats["verdict"] == "undecided", metric
        assert "too small to tell a fit judge from an unfit one" in stats["statement"], metric
        for name, dim in stats["dimensions"].items():
            assert dim["accuracy"] == 1.0, (metric, name)


def test_parse_failures_are_counted(
    tmp_path: Path, server_for: Callable[..., FakeOpenAIServer], find: Any
) -> None:
    good = scripted(pass_answer, find)
    seen: set[str] = set()
    lock = threading.Lock()

    def first_answer_malformed(path: str, body: Any) -> FakeResponse:
        # the first request about an example gets prose, the next one JSON
        with lock:
            first = json.dumps(body["messages"][:2]) not in seen
            seen.add(json.dumps(body["messages"][:2]))
        return chat_text("The call looks fine to me.") if first else good(path, body)

    server = server_for(first_answer_malformed)
    result = calibrate(tmp_path, write_spec(tmp_path, server))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    for stats in report["metrics"].values():
        assert stats["parse_failures"] == stats["examples"] and stats["judge_failures"] == 0


def test_examples_the_judge_never_answers_are_listed_not_scored(
    tmp_path: Path, server_for: Callable[..., FakeOpenAIServer], find: Any
) -> None:
    good = scripted(pass_answer, find)

    def no_json_for_speakability(path: str, body: Any) -> FakeResponse:
        system, _ = request_parts(body)
        if SYSTEMS[system] == "speakability":
            return chat_text("I cannot answer in JSON.")
        return good(path, body)

    server = server_for(no_json_for_speakability)
    result = calibrate(tmp_path, write_spec(tmp_path, server))
    assert result.exit_code == 3  # no speakability example answered
    report = json.loads(result.stdout)
    speak = report["metrics"]["speakability"]
    assert speak["n"] == 0 and speak["judge_failures"] == speak["examples"] > 0
    assert speak["parse_failures"] == 3 * speak["examples"]  # three attempts each
    assert all("malformed" in f["reason"] for f in speak["failures"])
    assert report["metrics"]["faithfulness"]["judge_failures"] == 0
    assert "judge answered no example of speakability" in flat(result.stderr)


def test_an_unreachable_judge_exits_non_zero(tmp_path: Path) -> None:
    spec = {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "j", **FAST}
    config = tmp_path / "judge.yaml"
    config.write_text(yaml.safe_dump(spec))
    result = runner.invoke(
        app,
        [
            *("judges", "calibrate", "--judge", str(config), "--metrics", "speakability"),
            *("--per-defect", "1", "--min-items", "1", "--out", str(tmp_path / "out")),
        ],
    )
    assert result.exit_code == 3
    assert "judge failure" in result.stderr and "judge answered no example" in flat(result.stderr)
    report = json.loads((tmp_path / "out" / "calibration.json").read_text())
    assert report["metrics"]["speakability"]["judge_failures"] == 3  # clean, obvious, subtle


def test_config_errors_name_the_file_and_field(tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({"suite": "clinic-calls", "asr": {"provider": "x"}}))
    result = runner.invoke(app, ["judges", "calibrate", "--judge", str(config)])
    assert result.exit_code == 2
    assert f"{config}: judge: missing" in flat(result.stderr)
    config.write_text(yaml.safe_dump({"judge": {"model": "m"}}))
    result = runner.invoke(app, ["judges", "calibrate", "--judge", str(config)])
    assert result.exit_code == 2 and f"{config}: judge: provider" in flat(result.stderr)
    spec = tmp_path / "judge.yaml"
    spec.write_text(yaml.safe_dump({"provider": "openai", "model": "m"}))
    result = runner.invoke(
        app, ["judges", "calibrate", "--judge", str(spec), "--metrics", "tone_of_voice"]
    )
    assert result.exit_code == 2 and "no development set for tone_of_voice" in flat(result.stderr)
    result = runner.invoke(app, ["judges", "calibrate", "--judge", str(spec)])
    assert result.exit_code == 2 and f"{spec}: judge: llm provider" in flat(result.stderr)


def test_unregistered_or_audio_metrics_are_skipped_with_a_message(tmp_path: Path) -> None:
    from voxeval.calibration.calibrate import plan_metrics

    plan = plan_metrics(None, audio_judge=False, registered={"faithfulness", "speakability"})
    assert plan.metrics == ["faithfulness", "speakability"]
    assert "not a registered metric" in plan.skipped["user_behavioural_fidelity"]
    plan = plan_metrics(
        ["agent_speech_fidelity"], audio_judge=False, registered={"agent_speech_fidelity"}
    )
    assert plan.metrics == [] and "--audio-judge" in plan.skipped["agent_speech_fidelity"]
