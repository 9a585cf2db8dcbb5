"""``scenarios validate`` on read-only/refusal scenarios, and an imported EVA-Bench release
(tests/benchmarks/eva_release_fixture.py) that validates and plays a scripted call to task
completion 1 through the real runner."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.benchmarks.eva_release_fixture import (
    DOMAIN,
    MODULE,
    compare_handles_plain_values,
    install_release,
)
from tests.simulation.helpers import scenario, write_suite
from voxeval.benchmarks.eva.eva_release import import_release
from voxeval.benchmarks.eva.eva_release_writer import write_release_suite
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.cli.main import app
from voxeval.protocols.eva_import_report import build_import_report
from voxeval.protocols.scenario_validation import validate_scenario

needs_plain_values = pytest.mark.skipif(
    not compare_handles_plain_values(),
    reason="comparing databases with _current_date needs the eva-hash db_compare change",
)


def _refusal_scenario() -> dict:
    data = scenario("refuse-1")
    data["expected_db"] = copy.deepcopy(data["initial_db"])  # nothing may change
    data["agent_script"] = [
        {"say": "What is your member ID and date of birth?"},
        {
            "say": "I am sorry, I cannot verify you. Goodbye.",
            "tool_calls": [
                {
                    "name": "verify_member",
                    "arguments": {"member_id": "KX4", "date_of_birth": "1999-01-01"},
                }
            ],
        },
    ]
    return data


def test_refusal_scenario_wrong_path_cannot_change_state_is_not_a_failure(
    tmp_path: Path,
) -> None:
    suite = load_scenario_suite(write_suite(tmp_path, [_refusal_scenario(), scenario("book-1")]))
    refusal, booking = (validate_scenario(s, suite.tools_for(s)) for s in suite.scenarios)
    assert refusal.expected_reached and refusal.wrong_path == "cannot_change_state"
    assert refusal.ok and refusal.errors == []
    assert booking.ok and booking.wrong_path == "rejected"


def test_validate_cli_shows_read_only_wrong_path(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, [_refusal_scenario()])
    result = CliRunner().invoke(app, ["scenarios", "validate", str(suite), "--json"])
    assert result.exit_code == 0, result.output
    checks = json.loads(result.stdout)
    assert checks[0]["wrong_path"] == "cannot_change_state" and checks[0]["ok"] is True


@pytest.fixture
def imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    release = install_release(tmp_path / "eva", monkeypatch)
    result = import_release(release, DOMAIN, "en", python_tools=True)
    return write_release_suite(result, tmp_path / "suite")


@needs_plain_values
def test_imported_release_validates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release = install_release(tmp_path / "eva", monkeypatch)
    result = import_release(release, DOMAIN, "en", python_tools=True)
    suite_file = write_release_suite(result, tmp_path / "suite")
    report = build_import_report(result, suite_file, [MODULE])
    assert (report.converted, report.failed, report.invalid) == (4, [], {})
    assert (report.validated, report.reached_expected) == (4, 4)
    # three records change the database; the refusal record (3.1.1) cannot
    assert (report.wrong_rejected, report.wrong_cannot_change_state, report.wrong_accepted) == (
        3,
        1,
        0,
    )


@needs_plain_values
def test_imported_release_scripted_call_reaches_task_completion(
    imported: Path, tmp_path: Path
) -> None:
    config = {
        "suite": str(imported.parent),
        "trusted_modules": [MODULE],
        "systems": [{"name": "reference", "type": "scripted"}],
        "trials": 1,
        "seed": 1,
        "simulation": {"caller": "scripted", "mode": "text"},
    }
    path = tmp_path / "live.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    units = {
        json.loads(call.read_text())["scenario"]: call.parent for call in out.rglob("call.json")
    }
    assert set(units) == {"1.1.1", "1.2.1", "2.1.1", "3.1.1"}
    for scenario_id, unit in units.items():
        scores = json.loads((unit / "scores.json").read_text())
        assert scores["task_completion"]["value"] == 1.0, scenario_id
    final = json.loads((units["1.2.1"] / "final_db.json").read_text())
    assert sorted(final["refunds"]) == ["RF-PX5502-001", "RF-PX5502-002"]  # call counts
    assert final["_current_date"] == "2026-03-17"
