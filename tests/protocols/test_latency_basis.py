"""Every live-call summary says whether latencies were measured or modelled, and how much of
them came from voxeval's declared rendering model (summary.json and summary.md)."""

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.simulation.helpers import scenario, write_suite
from tests.simulation.parties import ListAgent, ListCaller, NoTools, tone_voice
from voxeval.cli.main import app
from voxeval.protocols.latency_basis import latency_basis
from voxeval.simulation.engine import run_call
from voxeval.simulation.latency import RenderingLatency
from voxeval.simulation.parties import AgentTurn
from voxeval.simulation.recorder import record_call


def run_live(tmp_path: Path, simulation: dict) -> tuple[dict, str]:  # type: ignore[type-arg]
    suite = write_suite(tmp_path / "suite", [scenario("book-1")])
    config = {
        "suite": str(suite),
        "systems": [{"name": "good", "type": "scripted"}],
        "trials": 1,
        "seed": 3,
        "simulation": {"caller": "scripted", "mode": "text", **simulation},
    }
    path = tmp_path / "live.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "report" / "summary.json").read_text())
    markdown = (out / "report" / "summary.md").read_text()
    return summary["systems"]["good"], markdown


def test_modelled_latency_is_stated(tmp_path: Path) -> None:
    entry, markdown = run_live(tmp_path, {"latency_model": {"agent": {"kind": "fixed", "ms": 700}}})
    basis = entry["latency_basis"]
    assert basis["agent"] == "modelled" and basis["calls"] == 1
    assert basis["rendering_by_voxeval"] is None
    assert "Latencies: modelled (simulation.latency_model), not measured" in markdown


def test_measured_latency_is_stated_with_its_lane(tmp_path: Path) -> None:
    entry, markdown = run_live(tmp_path, {})
    basis = entry["latency_basis"]
    assert (basis["agent"], basis["measured_by"], basis["compute_lane"]) == (
        "measured",
        "voxeval",
        True,
    )
    assert basis["replies"] >= 1
    assert basis["clock"] == "virtual"  # the scripted agent's calls jump; none ran in real time
    assert "Latencies: measured by voxeval in the compute lane" in markdown
    assert "real time" not in markdown
    assert "no rendering by voxeval" in markdown  # text mode: nothing is spoken for the agent


class FixedComputeAgent(ListAgent):
    def respond(self, user_audio, user_text):  # type: ignore[no-untyped-def]
        turn = super().respond(user_audio, user_text)
        return AgentTurn(turn.text, end_call=turn.end_call, compute_s=0.75)


def test_rendering_share_from_recorded_calls(tmp_path: Path) -> None:
    folders = []
    for n in range(2):
        result = run_call(
            None,
            ListCaller("i need help", []),
            FixedComputeAgent(["a b c"], greeting=None),
            NoTools(),
            mode="audio",
            caller_voice=tone_voice,
            agent_voice=tone_voice,
            rendering_latency=RenderingLatency(first_audio_ms=250),
        )
        folder = tmp_path / f"unit{n}"
        record_call(result, folder)
        folders.append(folder)
    stored = json.loads((folders[0] / "call.json").read_text())["latency"]
    assert stored["turns"][0]["rendering_s"] == 0.25
    basis = latency_basis(folders)
    assert basis is not None
    rendering = basis["rendering_by_voxeval"]
    assert rendering["models"] == [{"first_audio_ms": 250.0, "per_char_ms": 0.0}]
    assert rendering["replies"] == 2 and rendering["seconds"] == pytest.approx(0.5)
    # 0.25 s of rendering on about 0.75 s of the agent's own compute per reply
    assert rendering["share"] == pytest.approx(0.25, abs=0.02)


def test_calls_recorded_before_the_basis_are_counted(tmp_path: Path) -> None:
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "call.json").write_text(json.dumps({"end_reason": "user_end_call"}))
    basis = latency_basis([tmp_path / "old"])
    assert basis is not None
    assert (basis["agent"], basis["calls_without_record"]) == ("unknown", 1)
    assert latency_basis([tmp_path / "missing"]) is None
