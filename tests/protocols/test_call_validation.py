"""Simulation validation with regeneration: the attempt loop on its own (archive layout,
seeds, system faults not regenerated, every attempt failing), the summary counts, and end to
end runs with the scripted caller and agent in text mode where a loopback judge finds the
caller's behaviour corrupted on the first attempt (regenerated, archived, counted in the
report) or on every attempt (the unit fails on our side, the run exits non-zero, a resumed
run starts the unit over)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from tests.simulation.helpers import scenario, write_suite
from voxeval.cli.main import app
from voxeval.errors import ConfigError, HarnessFault, SystemFault
from voxeval.protocols.call_validation import (
    ARCHIVE_DIR,
    VALIDATION_FILE,
    run_validated_call,
    validation_summary,
)
from voxeval.report.validation_blocks import validation_blocks
from voxeval.scoring.calls import user_behaviour
from voxeval.scoring.calls.simulation_gates import GateResult
from voxeval.simulation.simulation_config import ValidationConfig, parse_simulation
from voxeval.store import RunStore

TYPES = user_behaviour.CORRUPTION_TYPES


# ------------------------------------------------------------------ the attempt loop
class FakeAttempts:
    """Records a 'call' (call.json with its seed) per attempt; gates fail on listed attempts.

    ``run_validated_call`` takes the call and the gate check as plain callables, so its loop
    (archive, seeds, stop rules) is tested over these two; the end-to-end tests below run the
    same loop with the real engine, scripted parties and a loopback judge."""

    def __init__(self, unit_dir: Path, failing: set[int], fault_on: int | None = None) -> None:
        self.unit_dir, self.failing, self.fault_on = unit_dir, failing, fault_on
        self.seeds: list[int] = []

    def call_once(self, seed: int) -> SystemFault | None:
        self.seeds.append(seed)
        (self.unit_dir / "call.json").write_text(json.dumps({"seed": seed}))
        (self.unit_dir / "events.jsonl").write_text("")
        if len(self.seeds) == self.fault_on:
            return SystemFault("agent crashed", cause="exception")
        return None

    def check(self) -> dict[str, GateResult]:
        if len(self.seeds) in self.failing:
            return {
                "valid_end": GateResult("valid_end", "fail", "the call reached its time limit"),
                "user_behaviour": GateResult("user_behaviour", "skipped", "valid_end failed"),
            }
        return {
            "valid_end": GateResult("valid_end", "pass"),
            "user_behaviour": GateResult("user_behaviour", "not_run", "no judge is configured"),
        }


def run(unit_dir: Path, fake: FakeAttempts, attempts: int = 3) -> Any:
    return run_validated_call(
        unit_dir,
        ValidationConfig(attempts=attempts, gates=["valid_end", "user_behaviour"]),
        seed_for=lambda attempt: 1000 + attempt,
        call_once=fake.call_once,
        check=fake.check,
    )


def test_a_failed_attempt_is_archived_and_the_call_regenerated(tmp_path: Path) -> None:
    fake = FakeAttempts(tmp_path, failing={1})
    final = run(tmp_path, fake)
    assert fake.seeds == [1001, 1002] and final.attempt == 2 and final.passed
    archived = tmp_path / ARCHIVE_DIR / "attempt-1"
    assert sorted(p.name for p in archived.iterdir()) == [
        "call.json",
        "events.jsonl",
        VALIDATION_FILE,
    ]
    assert json.loads((archived / "call.json").read_text())["seed"] == 1001
    first = json.loads((archived / VALIDATION_FILE).read_text())
    assert first["failed_gates"] == ["valid_end"] and not first["passed"]
    assert first["gates"]["valid_end"]["reason"] == "the call reached its time limit"
    now = json.loads((tmp_path / VALIDATION_FILE).read_text())
    assert (now["attempt"], now["attempts_allowed"], now["seed"]) == (2, 3, 1002)
    assert now["gates"]["user_behaviour"]["status"] == "not_run"  # not run never fails a call
    assert json.loads((tmp_path / "call.json").read_text())["seed"] == 1002


def test_every_attempt_failing_is_a_simulator_fault_not_retried(tmp_path: Path) -> None:
    fake = FakeAttempts(tmp_path, failing={1, 2, 3})
    with pytest.raises(HarnessFault) as raised:
        run(tmp_path, fake)
    fault = raised.value
    assert fault.component == "simulator" and not fault.retryable
    assert "failed on all 3 attempt(s)" in str(fault)
    assert "valid_end: the call reached its time limit" in str(fault)
    assert sorted(p.name for p in (tmp_path / ARCHIVE_DIR).iterdir()) == ["attempt-1", "attempt-2"]
    assert json.loads((tmp_path / VALIDATION_FILE).read_text())["attempt"] == 3


def test_one_attempt_disables_regeneration(tmp_path: Path) -> None:
    fake = FakeAttempts(tmp_path, failing={1})
    with pytest.raises(HarnessFault, match="all 1 attempt"):
        run(tmp_path, fake, attempts=1)
    assert fake.seeds == [1001] and not (tmp_path / ARCHIVE_DIR).exists()


def test_a_system_fault_is_not_regenerated_and_its_gates_are_skipped(tmp_path: Path) -> None:
    fake = FakeAttempts(tmp_path, failing={1}, fault_on=2)
    with pytest.raises(SystemFault, match="agent crashed"):
        run(tmp_path, fake)
    assert fake.seeds == [1001, 1002]  # no third call
    data = json.loads((tmp_path / VALIDATION_FILE).read_text())
    assert data["skipped"].startswith("the system under test faulted (exception)")
    assert {g["status"] for g in data["gates"].values()} == {"skipped"}
    assert data["passed"] is None and data["failed_gates"] == []  # scored as the system's failure


def test_a_retried_interaction_starts_over(tmp_path: Path) -> None:
    with pytest.raises(HarnessFault):
        run(tmp_path, FakeAttempts(tmp_path, failing={1, 2, 3}))
    final = run(tmp_path, FakeAttempts(tmp_path, failing=set()))
    assert final.attempt == 1 and not (tmp_path / ARCHIVE_DIR).exists()


def test_summary_counts_attempts_gates_and_not_run(tmp_path: Path) -> None:
    units = [tmp_path / name for name in ("clean", "regenerated", "hopeless", "faulted", "never")]
    for unit in units:
        unit.mkdir()
    run(units[0], FakeAttempts(units[0], failing=set()))
    run(units[1], FakeAttempts(units[1], failing={1, 2}))
    with pytest.raises(HarnessFault):
        run(units[2], FakeAttempts(units[2], failing={1, 2, 3}))
    with pytest.raises(SystemFault):
        run(units[3], FakeAttempts(units[3], failing=set(), fault_on=1))
    summary = validation_summary(units, ValidationConfig())
    assert summary == {
        "attempts": 3,
        "gates": ["valid_end", "user_behaviour", "user_speech"],
        "validated_units": 4,
        "regenerated_units": 2,
        "failed_attempts": 5,  # 2 archived + 2 archived + the hopeless unit's last one
        "failed_attempts_by_gate": {"valid_end": 5},
        "units_failing_validation": 1,
        "units_skipped_system_fault": 1,
        "gates_not_run": {"user_behaviour": "no judge is configured"},
        "gates_not_run_attempts": {"user_behaviour": 2},
    }
    text = " ".join(str(getattr(b, "text", "")) for b in validation_blocks(summary))
    assert "Simulation validation" in text and "regenerated: 2" in text


def test_validation_config_defaults_and_errors() -> None:
    sim = parse_simulation({})
    assert sim.validation.attempts == 3
    assert sim.validation.gates == ["valid_end", "user_behaviour", "user_speech"]
    one = parse_simulation({"validation": {"attempts": 1, "gates": ["valid_end"]}})
    assert (one.validation.attempts, one.validation.gates) == (1, ["valid_end"])
    with pytest.raises(ConfigError, match=r"simulation: validation\.attempts"):
        parse_simulation({"validation": {"attempts": 0}})
    with pytest.raises(ConfigError, match=r"simulation: validation\.gates"):
        parse_simulation({"validation": {"gates": ["caller_mood"]}})


# ------------------------------------------------------------------ end to end
class BehaviourJudge:
    """A loopback judge for the behaviour gate: answers from a script (the last verdict
    repeats), each verdict a tuple of the corruption types it detects."""

    def __init__(self, *verdicts: tuple[str, ...]) -> None:
        self.verdicts = list(verdicts)
        self.calls = 0

    def __call__(self, path: str, body: dict[str, Any]) -> FakeResponse:
        assert body["messages"][0]["content"] == user_behaviour.SYSTEM
        found = self.verdicts[min(self.calls, len(self.verdicts) - 1)]
        self.calls += 1
        answer = {t: {"detected": t in found, "evidence": f"saw {t}"} for t in TYPES}
        return chat_text(json.dumps({"corruption": answer}))


def write_config(tmp_path: Path, judge_url: str, attempts: int = 3) -> Path:
    suite = write_suite(tmp_path / "suite", [scenario("book-1")])
    config = {
        "suite": str(suite),
        "systems": [{"name": "bot", "type": "scripted"}],
        "trials": 1,
        "seed": 3,
        "metrics": ["task_completion", "user_behavioural_fidelity"],
        "judge": {"provider": "openai", "base_url": judge_url, "model": "j", "schema_retries": 0},
        "simulation": {"caller": "scripted", "mode": "text", "validation": {"attempts": attempts}},
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


@pytest.fixture
def uncached(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scripted caller and agent make the same call on every attempt, so a cached
    verdict would come back; the scripted judge must be asked each time."""
    monkeypatch.setenv("VOXEVAL_NO_CACHE", "1")


@pytest.mark.usefixtures("uncached")
def test_a_call_failing_the_behaviour_gate_is_regenerated_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "run"
    judge = BehaviourJudge(("premature_ending",), ())
    with FakeOpenAIServer(judge) as server:
        config = write_config(tmp_path, server.url)
        result = CliRunner().invoke(app, ["run", str(config), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert judge.calls == 2  # one verdict per attempt; the score reuses the second
    unit = out / "items" / "book-1" / "bot" / "0"
    archived = unit / ARCHIVE_DIR / "attempt-1"
    assert {"call.json", "events.jsonl", "final_db.json", VALIDATION_FILE} <= {
        p.name for p in archived.iterdir()
    }
    first = json.loads((archived / VALIDATION_FILE).read_text())
    assert first["failed_gates"] == ["user_behaviour"]
    assert "premature_ending: saw premature_ending" in first["gates"]["user_behaviour"]["reason"]
    final = json.loads((unit / VALIDATION_FILE).read_text())
    assert final["attempt"] == 2 and final["passed"]
    seeds = [json.loads((d / "call.json").read_text())["seed"] for d in (archived, unit)]
    assert seeds[0] != seeds[1] and final["seed"] == seeds[1]
    scores = json.loads((unit / "scores.json").read_text())
    assert scores["user_behavioural_fidelity"]["value"] == 1.0  # the final attempt's verdict
    assert scores["task_completion"]["value"] == 1.0
    entry = json.loads((out / "report" / "summary.json").read_text())["systems"]["bot"]
    validation = entry["simulation_validation"]
    assert validation["regenerated_units"] == 1 and validation["failed_attempts"] == 1
    assert validation["failed_attempts_by_gate"] == {"user_behaviour": 1}
    assert validation["units_failing_validation"] == 0
    assert validation["gates_not_run"]["user_speech"].startswith("user_speech_fidelity_asr: no")
    markdown = (out / "report" / "summary.md").read_text()
    assert "### Simulation validation" in markdown and "regenerated: 1" in markdown
    assert "| user_behaviour | 1 |" in markdown


@pytest.mark.usefixtures("uncached")
def test_a_unit_failing_every_attempt_fails_on_our_side(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with FakeOpenAIServer(BehaviourJudge(("extra_modifications",))) as server:
        config = write_config(tmp_path, server.url, attempts=2)
        result = CliRunner().invoke(app, ["run", str(config), "--out", str(out)])
        assert result.exit_code == 1, result.output
        assert "failed (simulator): 1 unit" in result.output
        (failed,) = RunStore(out).units.records("failed")
        assert (failed.cause, failed.attempts) == ("simulator", 1)  # the runner did not retry
        assert "simulation validation failed on all 2 attempt(s)" in (failed.error or "")
        unit = out / "items" / "book-1" / "bot" / "0"
        assert [p.name for p in (unit / ARCHIVE_DIR).iterdir()] == ["attempt-1"]
        assert not (unit / "scores.json").exists()
        entry = json.loads((out / "report" / "summary.json").read_text())["systems"]["bot"]
        assert entry["units"]["failed_by_cause"] == {"simulator": 1}
        assert entry["simulation_validation"]["units_failing_validation"] == 1
        assert entry["simulation_validation"]["failed_attempts"] == 2
        assert entry["task_completion"]["n"] == 0  # not scored

    # Resuming retries the failed unit from an emptied folder: the archive goes with it.
    with FakeOpenAIServer(BehaviourJudge(())) as server:
        config = write_config(tmp_path, server.url, attempts=2)
        resumed = CliRunner().invoke(app, ["run", str(config), "--out", str(out)])
    assert resumed.exit_code == 0, resumed.output
    assert not (unit / ARCHIVE_DIR).exists()
    assert json.loads((unit / VALIDATION_FILE).read_text())["attempt"] == 1


def test_a_regenerated_identical_call_gets_its_own_verdict_not_a_cached_one(
    tmp_path: Path, tmp_cache: Path
) -> None:
    """Without behaviours the scripted caller and agent record the same call on every
    attempt; with the call cache on, the second attempt's gate must still ask the judge
    (issue 37, point 15)."""
    out = tmp_path / "run"
    judge = BehaviourJudge(("premature_ending",), ())
    with FakeOpenAIServer(judge) as server:
        config = write_config(tmp_path, server.url)
        data = yaml.safe_load(config.read_text())
        data["simulation"]["behaviour"] = "none"  # no seeded backchannels: identical calls
        config.write_text(yaml.safe_dump(data))
        result = CliRunner().invoke(app, ["run", str(config), "--out", str(out)])
        posts = [p.body for p in server.posts("/chat/completions")]
    assert result.exit_code == 0, result.output
    assert (judge.calls, len(posts)) == (2, 2)  # two identical attempts, two judge requests
    assert posts[0]["messages"] == posts[1]["messages"]  # the same call was judged twice
    unit = out / "items" / "book-1" / "bot" / "0"
    assert json.loads((unit / VALIDATION_FILE).read_text())["passed"]
    scores = json.loads((unit / "scores.json").read_text())
    assert scores["user_behavioural_fidelity"]["value"] == 1.0
    assert any(tmp_cache.rglob("*.json"))  # the verdicts were cached, each under its own key
