"""``voxeval run`` with a live-call config: recordings per call and report/summary.json."""

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.simulation.helpers import scenario, write_suite
from voxeval.cli.main import app


def write_config(tmp_path: Path, **overrides) -> Path:  # type: ignore[no-untyped-def]
    suite = write_suite(tmp_path / "suite", [scenario("book-1"), scenario("book-2", pauses=True)])
    config = {
        "suite": str(suite),
        "systems": [
            {"name": "good", "type": "scripted"},
            {"name": "wrong", "type": "scripted", "script": "wrong"},
        ],
        "trials": 2,
        "seed": 3,
        "simulation": {
            "caller": "scripted",
            "mode": "text",
            "latency_model": {"agent": {"kind": "fixed", "ms": 700}},
        },
        "perturbations": [{"name": "persona", "persona": "forgetful_disorganized"}],
        **overrides,
    }
    path = tmp_path / "live.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def test_run_writes_recordings_and_summary(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["run", str(write_config(tmp_path)), "--out", str(out)])
    assert result.exit_code == 0, result.output
    unit_dirs = sorted(p.parent for p in out.rglob("call.json"))
    assert len(unit_dirs) == 2 * 2 * 2 * 2  # scenarios x systems x trials x conditions
    for unit in unit_dirs:
        for name in (
            "events.jsonl",
            "initial_db.json",
            "final_db.json",
            "db_diff.json",
            "scores.json",
        ):
            assert (unit / name).exists(), unit / name
    summary = json.loads((out / "report" / "summary.json").read_text())
    good, wrong = summary["systems"]["good"], summary["systems"]["wrong"]
    assert good["task_completion"]["mean"] == 1.0 and wrong["task_completion"]["mean"] == 0.0
    for entry in (good, wrong):
        stat = entry["turn_taking"]
        assert {"mean", "ci_low", "ci_high", "n"} <= set(stat)
        assert [p["k"] for p in entry["pass_at_k"]] == [1, 2]
        assert [p["k"] for p in entry["pass_hat_k"]] == [1, 2]
        assert {"mean", "ci_low", "ci_high", "n"} <= set(entry["pass_at_k"][0])
        assert set(entry["passk_by_condition"]) == {"clean", "persona-forgetful_disorganized"}
    assert good["pass_at_k"][1]["mean"] == 1.0 and wrong["pass_hat_k"][1]["mean"] == 0.0
    wrong_units = [
        u for u in unit_dirs if json.loads((u / "call.json").read_text())["system"] == "wrong"
    ]
    assert len(wrong_units) == 8
    for unit in unit_dirs:  # the scripted caller's behaviour: seeded rules
        assert json.loads((unit / "call.json").read_text())["caller_behaviour"] == {"kind": "rules"}
    for unit in wrong_units:  # the wrong agent leaves a readable structured diff
        assert json.loads((unit / "db_diff.json").read_text())


def test_bad_simulation_section_is_reported(tmp_path: Path) -> None:
    config = write_config(tmp_path, simulation={"mode": "video"})
    result = CliRunner().invoke(app, ["run", str(config), "--out", str(tmp_path / "run")])
    assert result.exit_code == 2
    assert "simulation: mode" in result.output


@pytest.mark.models
@pytest.mark.slow
def test_audio_run_writes_tracks(tmp_path: Path) -> None:
    config = write_config(
        tmp_path,
        trials=1,
        systems=[{"name": "good", "type": "scripted"}],
        # a fixed agent latency: the noise under the line then meets the same speech in
        # every run (measured latency would move the agent's turns with the machine's load)
        simulation={
            "caller": "scripted",
            "mode": "audio",
            "latency_model": {"agent": {"kind": "fixed", "ms": 700}},
        },
        perturbations=[{"name": "noise", "environment": "street", "snr_db": 20}],
    )
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["run", str(config), "--out", str(out), "--limit", "1"])
    assert result.exit_code == 0, result.output
    for unit in (p.parent for p in out.rglob("call.json")):
        assert {"user.wav", "assistant.wav", "mixed.wav"} <= {p.name for p in unit.iterdir()}
    summary = json.loads((out / "report" / "summary.json").read_text())
    assert summary["systems"]["good"]["task_completion"]["n"] == 2
    # the offline speech-fidelity checks read the recorded tracks: the scripted caller's ID
    # and date of birth came through in both conditions; the listening reference agent reads
    # back what it heard, so its own speech is rated too
    good = summary["systems"]["good"]
    assert good["overall"]["user_speech_fidelity_asr"]["n"] == 2
    assert good["overall"]["user_speech_fidelity_asr"]["mean"] == 1.0
    assert good["overall"]["agent_speech_fidelity_asr"]["n"] >= 1


def test_unknown_agent_fails_before_any_call(tmp_path: Path) -> None:
    config = write_config(tmp_path, systems=[{"name": "x", "type": "nope"}])
    result = CliRunner().invoke(app, ["run", str(config), "--out", str(tmp_path / "run")])
    assert result.exit_code == 2
    assert "unknown system 'nope'" in result.output
    assert not list((tmp_path / "run").rglob("call.json"))
