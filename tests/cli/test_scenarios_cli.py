"""``voxeval scenarios validate``: every built-in scenario validates; a broken one fails."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import yaml
from typer.testing import CliRunner

from voxeval.benchmarks.eva.clinic_calls import CLINIC_CALLS_PATH
from voxeval.cli.main import app

runner = CliRunner()


def test_every_builtin_scenario_validates() -> None:
    result = runner.invoke(app, ["scenarios", "validate", "clinic-calls", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert len(rows) >= 20
    for row in rows:
        assert row["ok"] and row["expected_reached"] and row["wrong_rejected"], row
        assert row["errors"] == [] and row["diff"] == ""
        assert row["wrong_diff"]  # the wrong path is rejected for a visible reason


def test_broken_expected_state_fails_with_a_readable_diff(tmp_path: Path) -> None:
    suite = tmp_path / "clinic"
    shutil.copytree(CLINIC_CALLS_PATH.parent, suite)
    path = suite / "scenarios" / "clinic-s04-cancel-late-fee.yaml"
    data = yaml.safe_load(path.read_text())
    data["expected_db"]["patients"]["MZ6-41DP"]["balance"] = 60  # the policy fee is 75
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    result = runner.invoke(
        app, ["scenarios", "validate", str(suite), "--json", "--only", "clinic-s04-cancel-late-fee"]
    )
    assert result.exit_code == 1
    (row,) = json.loads(result.stdout)
    assert row["ok"] is False and row["expected_reached"] is False
    assert row["diff"] == "patients[MZ6-41DP].balance: expected 60, got 75"
    table = runner.invoke(app, ["scenarios", "validate", str(suite)])
    assert table.exit_code == 1
    assert "20/21 valid" in table.stdout


def test_wrong_protocol_and_missing_suite_are_friendly_errors() -> None:
    result = runner.invoke(app, ["scenarios", "validate", "wild-mini"])
    assert result.exit_code == 2
    result = runner.invoke(app, ["scenarios", "validate", "/no/such/suite"])
    assert result.exit_code == 2
