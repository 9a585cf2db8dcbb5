"""A live-call run with a perturbation writes the perturbation statistics into summary.json
and the Markdown/HTML report."""

import json
from pathlib import Path

from typer.testing import CliRunner

from tests.protocols.test_live_call import write_config
from voxeval.cli.main import app

CONDITION = "persona-forgetful_disorganized"


def test_run_writes_perturbation_table_and_variance_components(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["run", str(write_config(tmp_path)), "--out", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "report" / "summary.json").read_text())
    for name in ("good", "wrong"):
        entry = summary["systems"][name]
        table = entry["perturbation_effects"]
        assert table["baseline"] == "clean" and table["correction"] == "holm"
        effects = {e["metric"]: e for e in table["effects"]}
        assert {"task_completion", "turn_taking"} <= set(effects)
        for effect in effects.values():
            assert effect["condition"] == CONDITION and effect["test"] == "exact"
            assert 1 <= effect["scenarios"] <= 2  # response_latency ran for one scenario only
            assert 0 < effect["p_value"] <= 1 and effect["p_holm"] >= effect["p_value"]
        assert effects["turn_taking"]["scenarios"] == 2
        # the scripted agents complete (good) or fail (wrong) in every condition: no effect
        done = effects["task_completion"]
        assert done["delta"]["mean"] == 0.0 and done["p_value"] == 1.0
        assert done["significant"] is False
        components = entry["variance_components"]
        assert components["judge_repeat"]["available"] is False
        turn = components["by_metric"]["turn_taking"]["clean"]
        assert turn["scenarios"] == 2 and turn["n"] == 4
        assert turn["between_scenarios"] is not None and turn["within_scenario"] is not None
        curve = entry["ci_width_by_trials"]["turn_taking"]["clean"]
        assert [p["k"] for p in curve] == [1, 2]
    report = (out / "report" / "summary.md").read_text()
    assert "### Perturbation effects (vs clean)" in report
    assert "| condition | metric | delta [95% CI] | scenarios | not run | p | Holm p |" in report
    assert (
        f"| {CONDITION} | task_completion | 0 (no interval: all values equal) | 2 | 0 | 1 (exact) |"
        in (report)
    )
    assert "### Variance components" in report and "### CI width by trials per scenario" in report
    html = (out / "report" / "index.html").read_text()
    assert "Perturbation effects (vs clean)" in html and "Holm p" in html
