"""The validation's wrong path must prove something (issue 37.5): a generated wrong path whose
slipped call the tools refuse leaves the state as doing nothing would, so it is not counted as
"rejected"; another slip that takes effect is looked for, else the scenario is flagged."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from tests.simulation.helpers import scenario as make_scenario
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.protocols.eva_import_report import ImportReport, _count
from voxeval.protocols.scenario_validation import validate_scenario

CANCEL = {
    "name": "cancel_visit",
    "kind": "write",
    "parameters": {
        "type": "object",
        "properties": {"member_id": {"type": "string"}},
        "required": ["member_id"],
    },
    "steps": [
        {"lookup": {"table": "members", "key": "member_id", "as": "m"}},
        {"update": {"target": "m", "set": {"visit": None}}},
        {"return": {"status": "cancelled"}},
    ],
}
RESCHEDULE = {
    "name": "move_visit",
    "kind": "write",
    "parameters": {
        "type": "object",
        "properties": {"member_id": {"type": "string"}, "slot": {"type": "string"}},
        "required": ["member_id", "slot"],
    },
    "steps": [
        {"lookup": {"table": "members", "key": "member_id", "as": "m"}},
        {"lookup": {"table": "slots", "key": "slot", "as": "s"}},
        {"update": {"target": "m", "set": {"visit": "${slot}"}}},
        {"return": {"status": "moved"}},
    ],
}


def _suite(root: Path, tool: dict[str, Any], call: dict[str, Any], db: dict[str, Any]) -> Path:
    data = make_scenario("w-1")
    data["initial_db"] = db
    expected = copy.deepcopy(db)
    tool_name = tool["name"]
    data["agent"]["tools"] = [tool_name]
    data["agent_script"] = [
        {"say": "Done.", "tool_calls": [{"name": tool_name, "arguments": call}]}
    ]
    data["expected_db"] = expected
    root.mkdir(parents=True)
    (root / "tools.yaml").write_text(yaml.safe_dump({"tools": [tool]}))
    suite = {"protocol": "live_call", "domain": "tools.yaml", "scenarios": [data]}
    (root / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    return root


def _check(root: Path, expected_change: dict[str, Any]) -> Any:
    text = yaml.safe_load((root / "suite.yaml").read_text())
    scenario = text["scenarios"][0]
    for table, records in expected_change.items():
        for key, fields in records.items():
            scenario["expected_db"][table][key].update(fields)
    (root / "suite.yaml").write_text(yaml.safe_dump(text, sort_keys=False))
    suite = load_scenario_suite(root)
    s = suite.scenarios[0]
    return validate_scenario(s, suite.tools_for(s), suite.trust, suite.task_completion)


def test_a_refused_slip_does_not_count_as_a_rejected_wrong_path(tmp_path: Path) -> None:
    # the only slip (member id KX4 -> KXX) is refused: the state stays as if nothing was done
    db = {"members": {"KX4": {"id": "KX4", "visit": "friday"}}}
    root = _suite(tmp_path / "s", CANCEL, {"member_id": "KX4"}, db)
    check = _check(root, {"members": {"KX4": {"visit": None}}})
    assert check.expected_reached is True
    assert (check.wrong_path, check.wrong_rejected, check.ok) == ("unproven", False, False)
    assert "no generated wrong path changes the final state" in check.errors[0]
    report = ImportReport("d", 1, 1, [], [])
    _count(report, check)
    assert (report.wrong_rejected, report.wrong_unproven) == (0, 1)


def test_a_later_slip_that_takes_effect_proves_the_check(tmp_path: Path) -> None:
    # slipping the slot's last character is refused (no such slot); picking the other
    # existing slot is a wrong action that runs and is rejected by the final state
    db = {
        "members": {"KX4": {"id": "KX4", "visit": None}},
        "slots": {"MON-9": {"id": "MON-9"}, "TUE-9": {"id": "TUE-9"}},
    }
    root = _suite(tmp_path / "s", RESCHEDULE, {"member_id": "KX4", "slot": "MON-9"}, db)
    check = _check(root, {"members": {"KX4": {"visit": "MON-9"}}})
    assert (check.wrong_path, check.wrong_rejected, check.ok) == ("rejected", True, True)
    assert "members[KX4].visit: expected 'MON-9', got 'TUE-9'" in check.wrong_diff
