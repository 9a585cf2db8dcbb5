"""``voxeval rubrics`` end to end: generate against a loopback judge (one malformed answer
counted, resume skipping drafted dialogues), review driven through the terminal (accept,
edit, reject, skip, quit, resume), apply merging only accepted and edited criteria, stats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

import voxeval
from tests.benchmarks.rubric_fixtures import write_suite
from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text, error
from voxeval.benchmarks.mtalk.dialogue_suite import load_dialogue_suite
from voxeval.benchmarks.rubric_drafts import read_drafts
from voxeval.cli.commands_rubrics import _is_packaged
from voxeval.cli.main import app

runner = CliRunner()
FAST = {"timeout_s": 5.0, "max_retries": 0, "backoff_base_s": 0.001, "backoff_max_s": 0.002}
MARKERS = {"My exam is on Friday": "sem-1", "chest feels tight": "para-1", "phone ringing": "amb-1"}


def flat(text: str) -> str:
    return " ".join(text.split())


def drafting_server(malformed_for: str | None = None) -> FakeOpenAIServer:
    """A judge that drafts two questions naming the dialogue; its first answer for
    ``malformed_for`` is not JSON."""
    spoiled: set[str] = set()

    def respond(path: str, body: Any) -> FakeResponse:
        user = body["messages"][1]["content"]
        dialogue = next(d for marker, d in MARKERS.items() if marker in user)
        if dialogue == malformed_for and dialogue not in spoiled:
            spoiled.add(dialogue)
            return chat_text("Sure! Here are some criteria.")
        found = [{"text": f"Does the reply handle {dialogue} part {n}?"} for n in (1, 2)]
        return chat_text(json.dumps({"criteria": found}))

    return FakeOpenAIServer(respond)


def judge_file(tmp_path: Path, server: FakeOpenAIServer) -> Path:
    path = tmp_path / "judge.yaml"
    spec = {"provider": "openai", "base_url": server.url, "model": "judge", **FAST}
    path.write_text(yaml.safe_dump({**spec, "schema_retries": 0}))
    return path


def generate(tmp_path: Path, suite: Path, out: Path, server: FakeOpenAIServer) -> Any:
    args = ["rubrics", "generate", str(suite), "--judge", str(judge_file(tmp_path, server))]
    return runner.invoke(app, [*args, "-o", str(out), "--per-dialogue", "2", "--seed", "1"])


def test_generate_review_apply_stats(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite")
    out = tmp_path / "drafts.yaml"
    with drafting_server(malformed_for="para-1") as server:
        result = generate(tmp_path, suite, out, server)
        assert result.exit_code == 0, result.output
        assert len(server.posts("/chat/completions")) == 4  # 3 dialogues + 1 retry
    assert "3 dialogues drafted (6 criteria)" in flat(result.output)
    assert "parse failures 1" in flat(result.output)
    drafts = read_drafts(out)
    assert drafts.dialogues["para-1"].judge["parse_failures"] == 1
    assert [(c.dialogue, c.id, c.status) for c in drafts.criteria][2:4] == [
        ("para-1", "criteria_d_3", "pending"),
        ("para-1", "criteria_d_4", "pending"),
    ]

    # resume: everything drafted, the judge is not called again
    with drafting_server() as server:
        result = generate(tmp_path, suite, out, server)
        assert result.exit_code == 0, result.output
        assert server.posts("/chat/completions") == []
    assert "0 dialogues drafted (0 criteria), 3 already in" in flat(result.output)

    # review: accept, edit (new text), reject, skip, then quit
    keys = "a\ne\nDoes it count three days?\nr\ns\nq\n"
    result = runner.invoke(app, ["rubrics", "review", str(out)], input=keys)
    assert result.exit_code == 0, result.output
    assert "My exam is on Friday." in result.output  # the transcript is shown
    assert "3 decided this session; 3 still pending" in flat(result.output)
    statuses = [(c.id, c.status, c.text, c.draft) for c in read_drafts(out).criteria]
    assert statuses[0] == (
        "criteria_d_1", "accepted", "Does the reply handle sem-1 part 1?",
        "Does the reply handle sem-1 part 1?",
    )  # fmt: skip
    assert statuses[1] == (
        "criteria_d_2", "edited", "Does it count three days?",
        "Does the reply handle sem-1 part 2?",
    )  # fmt: skip
    assert statuses[2][1] == "rejected" and statuses[3][1] == "pending"  # skipped

    # resume the review on one dialogue: only its pending criteria are walked
    result = runner.invoke(
        app, ["rubrics", "review", str(out), "--dialogue", "para-1"], input="a\n"
    )
    assert result.exit_code == 0, result.output
    assert "1/1" in result.output and "criteria_d_4" in result.output
    assert "1 decided this session; 2 still pending" in flat(result.output)

    # a review that ends without quitting (no more input) keeps what was decided
    result = runner.invoke(app, ["rubrics", "review", str(out), "--dialogue", "amb-1"], input="x\n")
    assert result.exit_code != 0  # "x" is no choice and the input ends: aborted
    assert [c.status for c in read_drafts(out).criteria][4:] == ["pending", "pending"]

    # stats: accepted 2, edited 1, rejected 1 (2 pending) -> 3/4; per dimension
    result = runner.invoke(app, ["rubrics", "stats", str(out), "--json"])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)
    assert stats["overall"] == {
        "accepted": 2, "edited": 1, "rejected": 1, "pending": 2, "decided": 4,
        "acceptance_rate": 0.75,
    }  # fmt: skip
    assert stats["dimensions"]["semantic"]["acceptance_rate"] == 1.0  # accepted, edited
    assert stats["dimensions"]["paralinguistic"]["acceptance_rate"] == 0.5  # rejected, accepted
    assert stats["dimensions"]["ambient"]["acceptance_rate"] is None
    table = runner.invoke(app, ["rubrics", "stats", str(out)])
    assert "75.0% (3/4)" in table.output

    # apply into another folder: only accepted and edited criteria join the suite
    merged_dir = tmp_path / "merged"
    result = runner.invoke(
        app, ["rubrics", "apply", str(out), str(suite), "--into", str(merged_dir), "--json"]
    )
    assert result.exit_code == 0, result.output
    counts = json.loads(result.stdout)
    assert (counts["added"], counts["not_used"]) == (3, 3)
    merged = {d.id: d for d in load_dialogue_suite(merged_dir).dialogues}
    assert [(c.id, c.text) for c in merged["sem-1"].rubrics.sample] == [
        ("criteria_d_1", "Does the reply handle sem-1 part 1?"),
        ("criteria_d_2", "Does it count three days?"),
    ]
    assert merged["sem-1"].rubrics.sample[1].draft == "Does the reply handle sem-1 part 2?"
    assert [c.id for c in merged["para-1"].rubrics.used("sample")] == [
        "criteria_d_1",
        "criteria_d_4",
    ]
    assert merged["amb-1"].rubrics.sample == []
    header = yaml.safe_load((merged_dir / "suite.yaml").read_text())
    assert header["channels"] == "left"  # the suite's settings are kept
    # applying again adds nothing
    result = runner.invoke(
        app, ["rubrics", "apply", str(out), str(merged_dir / "suite.yaml"), "--json"]
    )
    assert json.loads(result.stdout)["already_present"] == 3


def test_review_with_nothing_pending_and_unknown_dialogue(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite")
    out = tmp_path / "drafts.yaml"
    with drafting_server() as server:
        assert generate(tmp_path, suite, out, server).exit_code == 0
    result = runner.invoke(app, ["rubrics", "review", str(out), "--dialogue", "nope"])
    assert result.exit_code == 2 and "no drafts for dialogue 'nope'" in flat(result.output)
    result = runner.invoke(app, ["rubrics", "review", str(out)], input="a\n" * 6)
    assert result.exit_code == 0
    result = runner.invoke(app, ["rubrics", "review", str(out)])
    assert "nothing pending to review" in result.output


def test_apply_refuses_to_write_into_the_installed_package(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite")
    assert not _is_packaged(suite)
    assert _is_packaged(Path(voxeval.__file__).parent / "benchmarks" / "data" / "x" / "suite.yaml")


def test_generate_exit_codes_name_what_was_not_drafted(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite")
    out = tmp_path / "drafts.yaml"

    def never_json(path: str, body: Any) -> FakeResponse:
        return chat_text("I would rather not.")

    with FakeOpenAIServer(never_json) as server:
        result = generate(tmp_path, suite, out, server)
    assert result.exit_code == 1
    assert "not drafted sem-1: judge output malformed after 3 attempts" in flat(result.output)
    assert "parse failures 9" in flat(result.output)
    assert sorted(read_drafts(out).failures) == ["amb-1", "para-1", "sem-1"]

    with FakeOpenAIServer(lambda path, body: error(503, "down")) as server:
        result = generate(tmp_path, suite, out, server)
    assert result.exit_code == 3 and "could not be reached" in flat(result.output)
