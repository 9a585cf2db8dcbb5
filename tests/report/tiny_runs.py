"""A real tiny run for the report tests: two scripted agents (one takes the expected path, one
slips a tool argument) on three scenarios, three trials, a clean and a persona condition, in
text mode with a seeded latency model (a few seconds, no models)."""

from __future__ import annotations

from pathlib import Path

import yaml
from typer.testing import CliRunner

from tests.simulation.helpers import scenario, write_suite
from voxeval.cli.main import app


def live_call_run(folder: Path) -> Path:
    """Run it into ``folder/run`` and return the run folder (report written)."""
    suite = write_suite(
        folder / "suite",
        [scenario("book-1"), scenario("book-2", pauses=True), scenario("book-3")],
    )
    config = {
        "suite": str(suite),
        "systems": [
            {"name": "good", "type": "scripted"},
            {"name": "wrong", "type": "scripted", "script": "wrong"},
        ],
        "trials": 3,
        "seed": 3,
        "simulation": {
            "caller": "scripted",
            "mode": "text",
            "latency_model": {"agent": {"kind": "normal", "mean_ms": 900, "sd_ms": 200}},
        },
        "perturbations": [{"name": "persona", "persona": "forgetful_disorganized"}],
    }
    path = folder / "live.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    out = folder / "run"
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def multi_turn_run(folder: Path) -> Path:
    """The 3-dialogue multi-turn run of ``tests/protocols/test_multi_turn.py`` (a live HTTP
    system and a replay, a loopback rubric and arena judge); returns the run folder."""
    from tests.fakes.openai_server import FakeOpenAIServer
    from tests.protocols.test_multi_turn import World, run, write_config

    with FakeOpenAIServer(World()) as server:
        run(write_config(folder, server.url), folder / "out")
    return folder / "out"
