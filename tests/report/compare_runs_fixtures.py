"""Run folders for the comparison and leaderboard tests.

``live_runs`` makes real live-call runs (scripted agent and caller, text mode, fixed latency)
of one small suite: in the ``wrong`` run the agent slips on every scenario except
``UNCHANGED`` (whose ``wrong_script`` is the expected path), so task completion drops exactly
on the other scenarios. ``stored_run`` writes a run folder from given score rows (for golden
numbers with several trials, a failed unit and a score that did not run).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from pathlib import Path

import yaml
from typer.testing import CliRunner

from tests.protocols.stored_runs import store_rows
from tests.simulation.helpers import scenario, write_suite
from voxeval.cli.main import app
from voxeval.config import RunConfig
from voxeval.protocols.contract import WorkUnit
from voxeval.store import RunStore
from voxeval.store.records import ScoreRow

SCENARIOS = [f"s{i:02d}" for i in range(1, 13)]
UNCHANGED = {"s01", "s02"}  # the "wrong" agent plays the expected path here


def live_suite(root: Path, name: str = "mini-calls", ids: Iterable[str] = SCENARIOS) -> Path:
    scenarios = []
    for sid in ids:
        entry = scenario(sid)
        if sid in UNCHANGED:
            entry["wrong_script"] = copy.deepcopy(entry["agent_script"])
        scenarios.append(entry)
    path = write_suite(root, scenarios)
    if name != "mini-calls":
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data["name"] = name
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def live_run(tmp: Path, name: str, suite: Path, script: str, seed: int = 3) -> Path:
    config = {
        "suite": str(suite),
        "systems": [{"name": "agent", "type": "scripted", "script": script}],
        "trials": 1,
        "seed": seed,
        "simulation": {
            "caller": "scripted",
            "mode": "text",
            "latency_model": {"agent": {"kind": "fixed", "ms": 700}},
        },
    }
    config_path = tmp / f"{name}.yaml"
    config_path.write_text(yaml.safe_dump(config), encoding="utf-8")
    out = tmp / name
    result = CliRunner().invoke(app, ["run", str(config_path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def stored_run(
    tmp: Path,
    name: str,
    rows: Iterable[ScoreRow],
    *,
    seed: int = 0,
    failed: Iterable[WorkUnit] = (),
    suite_name: str = "syn",
    judge: dict | None = None,
    protocol: str = "live_call",
) -> Path:
    """A run folder of a one-file suite (live calls by default) holding ``rows`` (done
    units) and the ``failed`` units (failed on voxeval's side, cause ``simulator``)."""
    suite = tmp / f"suite-{suite_name}.yaml"
    suite.write_text(
        yaml.safe_dump({"protocol": protocol, "name": suite_name, "version": "1.0"}),
        encoding="utf-8",
    )
    rows = list(rows)
    systems = sorted({r.system for r in rows} | {u.system for u in failed})
    config = RunConfig(
        suite=str(suite),
        systems=[{"name": s, "type": "scripted"} for s in systems],
        seed=seed,
        judge=judge,
    )
    store = RunStore(tmp / name)
    store.run_yaml.write_provenance(config)
    store_rows(store, rows)
    for unit in failed:
        store.units.record_failure(unit, RuntimeError("caller simulator down"), cause="simulator")
    store.close()
    return tmp / name
