"""The suite's ``task_completion:`` settings reach the metric of a live-call run: a scripted
agent appends two notes in the opposite order to the expected one, to an order-free list
(``notifications``) in one scenario and to an ordered one (``history``) in the other."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from tests.simulation.helpers import TOOLS, scenario
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.cli.main import app
from voxeval.errors import ConfigError

ADD_NOTE = {
    "name": "add_note",
    "kind": "write",
    "requires_auth": True,
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
    "steps": [
        {"lookup": {"table": "members", "key": "session.member_id", "as": "m"}},
        {
            "update": {
                "target": "m",
                "set": {
                    "notifications": "${m.notifications + [text]}",
                    "history": "${m.history + [text]}",
                },
            }
        },
        {"return": {"status": "noted"}},
    ],
}
MEMBER = {"id": "KX4", "dob": "1980-05-01", "name": "Ann", "visit": None}


def _scenario(sid: str, history: list[str]) -> dict[str, Any]:
    data = scenario(sid)
    data["initial_db"] = {
        "_current_date": "2026-03-02",
        "members": {"KX4": {**MEMBER, "notifications": [], "history": []}},
    }
    expected_member = {**MEMBER, "notifications": ["a", "b"], "history": history}
    data["expected_db"] = {
        "_current_date": "2026-03-02",
        "members": {"KX4": expected_member},
        "session": {"member_id": "KX4"},
    }
    data["agent"] = {**data["agent"], "tools": ["verify_member", "add_note"]}
    verify = data["agent_script"][1]["tool_calls"]
    data["agent_script"] = [
        data["agent_script"][0],
        {"say": "You are verified. Anything to note?", "tool_calls": verify},
        {
            "say": "Both notes are on file. Goodbye.",
            "tool_calls": [
                {"name": "add_note", "arguments": {"text": "b"}},
                {"name": "add_note", "arguments": {"text": "a"}},
            ],
        },
    ]
    return data


def _write_suite(tmp_path: Path, settings: dict[str, Any] | None) -> Path:
    root = tmp_path / "suite"
    root.mkdir(parents=True)
    (root / "tools.yaml").write_text(
        yaml.safe_dump({"tools": [*TOOLS["tools"], ADD_NOTE]}), encoding="utf-8"
    )
    suite: dict[str, Any] = {
        "protocol": "live_call",
        "name": "notes",
        "domain": "tools.yaml",
        "scenarios": [_scenario("free-order", ["b", "a"]), _scenario("fixed-order", ["a", "b"])],
    }
    if settings is not None:
        suite["task_completion"] = settings
    (root / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    return root / "suite.yaml"


def _run(tmp_path: Path, settings: dict[str, Any] | None) -> dict[str, float]:
    config = {
        "suite": str(_write_suite(tmp_path, settings)),
        "systems": [{"name": "good", "type": "scripted"}],
        "trials": 1,
        "seed": 1,
        "metrics": ["task_completion"],
        "simulation": {"caller": "scripted", "mode": "text"},
    }
    config_path = tmp_path / "run.yaml"
    config_path.write_text(yaml.safe_dump(config), encoding="utf-8")
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["run", str(config_path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    values = {}
    for unit in (p.parent for p in out.rglob("call.json")):
        call = json.loads((unit / "call.json").read_text())
        scores = json.loads((unit / "scores.json").read_text())
        values[call["scenario"]] = scores["task_completion"]["value"]
    return values


@pytest.mark.parametrize(
    ("settings", "free", "fixed"),
    [
        (None, 1.0, 0.0),  # reference default: notifications order-free, history ordered
        # the suite's own set replaces the reference one
        ({"order_free_lists": ["history", "notifications"]}, 1.0, 1.0),
        ({"order_free_lists": ["history"]}, 0.0, 0.0),  # notifications are ordered now
        ({"order_free_lists": [], "sort_all_lists": True}, 1.0, 1.0),
    ],
)
def test_suite_settings_reach_task_completion(
    tmp_path: Path, settings: dict[str, Any] | None, free: float, fixed: float
) -> None:
    assert _run(tmp_path, settings) == {"free-order": free, "fixed-order": fixed}


def test_bad_settings_name_the_suite_field(tmp_path: Path) -> None:
    path = _write_suite(tmp_path, {"sort_all": True})
    with pytest.raises(ConfigError, match=r"suite.yaml: task_completion: sort_all: Extra inputs"):
        load_scenario_suite(path)
    path = _write_suite(tmp_path / "b", {"order_free_lists": "bookings"})
    with pytest.raises(ConfigError, match=r"task_completion: order_free_lists"):
        load_scenario_suite(path)
