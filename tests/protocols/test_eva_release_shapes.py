"""Shapes of the released EVA-Bench airline data that the first import of the real files
revealed (docs/eva-import.md, "Tried on the released airline domain"), rebuilt on the test
release of tests/benchmarks/eva_release_fixture.py with our own records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.benchmarks.eva_release_fixture import (
    DOMAIN,
    MODULE,
    forget_tool_module,
    records,
    write_release,
)
from voxeval.benchmarks.eva.eva_release import import_release
from voxeval.benchmarks.eva.eva_release_writer import write_release_suite
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.benchmarks.tools.db_compare import TaskCompletionSettings
from voxeval.cli.main import app
from voxeval.protocols.eva_import_report import build_import_report
from voxeval.protocols.scenario_validation import validate_scenario


def _release(root: Path, monkeypatch: pytest.MonkeyPatch, recs: list | None = None) -> Path:
    forget_tool_module()
    write_release(root, recs)
    monkeypatch.syspath_prepend(str(root / "src"))
    return root


def test_current_date_comes_from_the_record_as_the_reference_sets_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # released initial-DB files may lack _current_date or hold another date; the reference's
    # tool runtime sets it from current_date_time, and the released tools read it
    recs = records()
    del recs[0][1]["_current_date"]  # 1.1.1: no _current_date in its file
    recs[1][1]["_current_date"] = "2025-01-01"  # 1.2.1: a stale one
    root = _release(tmp_path / "eva", monkeypatch, recs)
    result = import_release(root, DOMAIN, "en", python_tools=True)
    dates = {s.id: s.initial_db["_current_date"] for s in result.scenarios}
    assert dates == {"1.1.1": "2026-03-17", "1.2.1": "2026-03-17", "2.1.1": "2026-03-17",
                     "3.1.1": "2026-03-17"}  # fmt: skip
    suite = load_scenario_suite(
        write_release_suite(result, tmp_path / "suite"), trusted_modules=[MODULE]
    )
    for scenario_id in ("1.1.1", "1.2.1"):  # their refund tool stamps db["_current_date"]
        scenario = suite.get(scenario_id)
        check = validate_scenario(scenario, suite.tools_for(scenario), suite.trust)
        assert check.tool_errors == [] and check.expected_reached, check


def _without_session_writes(root: Path) -> None:
    """The auth tool of some released domains never writes ``db["session"]`` although the
    expected database holds one (airline's get_reservation)."""
    tools = root / "src" / "parcelco_eva" / "tools" / "parcel_tools.py"
    text = tools.read_text()
    for line in (
        '    db.setdefault("session", {})["tracking_number"] = params["tracking_number"].upper()\n',
        '    db["session"]["last_name"] = params["last_name"]\n',
    ):
        assert line in text
        text = text.replace(line, "")
    tools.write_text(text)


def test_session_mismatch_fails_unless_the_suite_opts_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _release(tmp_path / "eva", monkeypatch)
    _without_session_writes(root)
    result = import_release(root, DOMAIN, "en", python_tools=True)
    suite_file = write_release_suite(result, tmp_path / "suite")
    suite = load_scenario_suite(suite_file, trusted_modules=[MODULE])
    scenario = suite.get("2.1.1")
    # the reference fails task completion on a session mismatch before comparing hashes
    failed = validate_scenario(scenario, suite.tools_for(scenario), suite.trust)
    assert (failed.ok, failed.expected_reached, failed.notes) == (False, False, [])
    assert failed.errors[0].startswith("session mismatch:")
    assert "tracking_number" in failed.errors[0]
    loose = TaskCompletionSettings(require_session=False)
    check = validate_scenario(scenario, suite.tools_for(scenario), suite.trust, loose)
    assert (check.ok, check.expected_reached, check.errors) == (True, True, [])
    assert len(check.notes) == 1 and check.notes[0].startswith("session mismatch:")
    report = build_import_report(result, suite_file, [MODULE])
    assert sorted(report.invalid) == ["1.1.1", "1.2.1", "2.1.1"]  # 3.1.1 expects no session
    assert (report.reached_expected, report.wrong_rejected) == (1, 3)


def test_import_eva_exit_code_1_prints_no_traceback(tmp_path: Path) -> None:
    forget_tool_module()
    root = write_release(tmp_path / "eva")
    # no tool definitions anywhere (nor the release's tool file): no record converts
    (root / "src" / "parcelco_eva" / "tools" / "parcel_tools.py").unlink()
    result = CliRunner().invoke(
        app, ["scenarios", "import-eva", str(root), "--domain", DOMAIN, "-o", str(tmp_path / "o")]
    )
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert "0/4 records converted" in result.output


def test_validate_json_lists_notes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _release(tmp_path / "eva", monkeypatch)
    _without_session_writes(root)
    suite_file = write_release_suite(
        import_release(root, DOMAIN, "en", python_tools=True), tmp_path / "suite"
    )
    text = suite_file.read_text() + "task_completion: {require_session: false}\n"
    suite_file.write_text(text)  # the opt-out: session mismatches become notes
    result = CliRunner().invoke(
        app, ["scenarios", "validate", str(suite_file.parent), "--trust", MODULE, "--json"]
    )
    assert result.exit_code == 0, result.output
    checks = {c["scenario"]: c for c in json.loads(result.stdout)}
    assert all(c["ok"] for c in checks.values())
    assert checks["2.1.1"]["notes"][0].startswith("session mismatch:")
    assert checks["3.1.1"]["notes"] == []  # the refusal record expects no session


def assign_seat(params: dict, db: dict, call_index: int) -> dict:
    """Released-tool style: optional fields default to None, so null means "not given"."""
    seat = f"{20 + call_index}{'A' if params['seat_preference'] == 'window' else 'C'}"
    if params.get("flight_number") is not None:
        seat += "/" + params["flight_number"]
    db["seats"]["PAX001"] = {"seat": seat}
    return {"status": "success", "seat_assigned": seat}


def test_optional_parameters_sent_as_null_are_not_given() -> None:
    from tests.simulation.helpers import scenario as make_scenario
    from voxeval.benchmarks.eva.scenario import Scenario
    from voxeval.benchmarks.tools import ToolRuntime, parse_tool_specs
    from voxeval.benchmarks.tools.tool_spec import HookTrust

    here = "tests.protocols.test_eva_release_shapes"
    spec = {
        "name": "assign_seat",
        "kind": "write",
        "python": f"{here}:assign_seat",
        "python_call": "eva",
        "parameters": {
            "type": "object",
            "properties": {
                "seat_preference": {"type": "string", "enum": ["window", "aisle"]},
                "flight_number": {"type": "string"},  # optional, as in the agent YAML
            },
            "required": ["seat_preference"],
        },
    }
    tools = parse_tool_specs([spec], "tools.yaml", HookTrust((here,)))
    data = make_scenario("seat-1")
    data["initial_db"] = {"seats": {}}
    data["agent"]["tools"] = []
    runtime = ToolRuntime(Scenario.model_validate(data), tools, HookTrust((here,)))
    ok = runtime.call("assign_seat", {"seat_preference": "window", "flight_number": None})
    assert (ok.valid, ok.error, ok.result["seat_assigned"]) == (True, None, "21A")
    assert ok.arguments == {"seat_preference": "window", "flight_number": None}  # as sent
    # a required parameter sent as null is still refused
    bad = runtime.call("assign_seat", {"seat_preference": None})
    assert bad.valid is False and "seat_preference" in str(bad.error)
    assert runtime.db["seats"] == {"PAX001": {"seat": "21A"}}
