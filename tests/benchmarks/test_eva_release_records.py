"""Every released EVA-Bench record imports (issue 37.3): unknown user-goal keys are kept,
``<LOC:...>`` places and ``name_aliases`` are resolved as the reference resolves them, and the
release's Python tools are used without ``--python-tools`` (read, not run; trusted at run
time). Fixture: tests/benchmarks/eva_release_fixture.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.benchmarks.eva_release_fixture import (
    DOMAIN,
    MODULE,
    forget_tool_module,
    records,
    write_release,
)
from voxeval.benchmarks.eva.eva_locations import spoken_name, with_name_aliases
from voxeval.benchmarks.eva.eva_release import import_release
from voxeval.benchmarks.eva.eva_release_writer import write_release_suite
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.cli.main import app
from voxeval.errors import ConfigError
from voxeval.protocols.scenario_validation import validate_scenario
from voxeval.simulation.callers.llm_caller import caller_prompt
from voxeval.simulation.personas import get_persona

HQ = {
    "name": "Headquarters",
    "translatable": True,
    "base": ["hq", "headquarters"],
    "translations": {"es": ["sede central", "oficina central"], "fr": ["siège"]},
}


def _release(root: Path, monkeypatch: pytest.MonkeyPatch | None = None) -> Path:
    """The fixture release with one place file, an itsm-style goal (extra keys, <LOC:...>)
    and a database record naming the place."""
    forget_tool_module()
    recs = records()
    record, initial = recs[2]  # 2.1.1: reroute
    goal = record["user_goal"]
    goal["decision_tree"]["must_have"] = ["The parcel goes to the new address."]
    goal["resolution"] = "The agent confirms the reroute."
    goal["high_level_user_goal"] = "Send the parcel to <LOC:Headquarters>, not <LOC:Old Depot>."
    record["starting_utterances"]["es"] = "Hola, llamo por mi paquete para <LOC:Headquarters>."
    for db in (initial, record["ground_truth"]["expected_scenario_db"]):
        db["sites"] = {"BLD1": {"code": "BLD1", "name": "Headquarters"}}
    write_release(root, recs)
    aliases = root / "data" / f"{DOMAIN}_aliases"
    aliases.mkdir()
    (aliases / "headquarters.json").write_text(json.dumps(HQ), encoding="utf-8")
    if monkeypatch is not None:  # for loading the suite, which imports the trusted tools
        monkeypatch.syspath_prepend(str(root / "src"))
    return root


def test_unknown_user_goal_keys_are_kept_and_shown_to_the_caller(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _release(tmp_path / "eva", monkeypatch)
    result = import_release(root, DOMAIN, "en")
    assert (len(result.scenarios), result.failures) == (4, [])
    suite_file = write_release_suite(result, tmp_path / "suite")
    written = yaml.safe_load((tmp_path / "suite" / "scenarios" / "2.1.1.yaml").read_text())
    assert written["user_goal"]["resolution"] == "The agent confirms the reroute."
    assert written["user_goal"]["decision_tree"]["must_have"] == [
        "The parcel goes to the new address."
    ]
    scenario = load_scenario_suite(suite_file, trusted_modules=[MODULE]).get("2.1.1")
    prompt = caller_prompt(scenario, get_persona("default"))
    assert "- resolution: The agent confirms the reroute." in prompt
    assert '- decision_tree.must_have: ["The parcel goes to the new address."]' in prompt
    other = load_scenario_suite(suite_file, trusted_modules=[MODULE]).get("1.1.1")
    assert "Other details of your goal" not in caller_prompt(other, get_persona("default"))


def test_loc_places_resolve_per_language_as_in_the_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _release(tmp_path / "eva", monkeypatch)
    result = import_release(root, DOMAIN, "en")
    assert any("Old Depot" in note for note in result.notes)  # no alias file: kept as written
    suite_file = write_release_suite(result, tmp_path / "suite")
    english = load_scenario_suite(suite_file, trusted_modules=[MODULE]).get("2.1.1")
    assert english.user_goal.high_level_user_goal == (
        "Send the parcel to Headquarters, not Old Depot."
    )
    spanish = load_scenario_suite(suite_file, trusted_modules=[MODULE], language="es").get("2.1.1")
    assert spanish.user_goal.high_level_user_goal == (
        "Send the parcel to sede central, not Old Depot."
    )
    assert spanish.user_goal.starting_utterance == ("Hola, llamo por mi paquete para sede central.")
    assert spoken_name("Headquarters", {"Headquarters": HQ}, "de") == "Headquarters"


def test_name_aliases_are_injected_in_both_databases(tmp_path: Path) -> None:
    root = _release(tmp_path / "eva")
    scenario = next(s for s in import_release(root, DOMAIN, "es").scenarios if s.id == "2.1.1")
    want = ["hq", "headquarters", "sede central", "oficina central"]
    assert scenario.initial_db["sites"]["BLD1"]["name_aliases"] == want
    assert scenario.expected_db["sites"]["BLD1"]["name_aliases"] == want
    assert with_name_aliases({"name": "Elsewhere"}, {"Headquarters": HQ}, "en") == {
        "name": "Elsewhere"
    }


def test_python_tools_are_used_without_the_flag_and_trusted_at_run_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _release(tmp_path / "eva")  # its src/ is not on sys.path: nothing is imported
    result = import_release(root, DOMAIN, "en")
    assert (len(result.scenarios), result.missing_tools) == (4, [])
    assert result.python_module == MODULE and not result.python_module_imported
    suite_file = write_release_suite(result, tmp_path / "suite")
    assert yaml.safe_load(suite_file.read_text())["python_tools_module"] == MODULE
    with pytest.raises(ConfigError, match="is not trusted"):
        load_scenario_suite(suite_file)
    monkeypatch.syspath_prepend(str(root / "src"))
    suite = load_scenario_suite(suite_file, trusted_modules=[MODULE])
    checks = [validate_scenario(s, suite.tools_for(s), suite.trust, suite.task_completion,
                                suite.tool_arguments) for s in suite.scenarios]  # fmt: skip
    assert all(c.expected_reached for c in checks), [c.errors for c in checks]


def test_cli_imports_every_record_and_does_not_run_unrequested_code(tmp_path: Path) -> None:
    root = _release(tmp_path / "eva")
    out = tmp_path / "o"
    result = CliRunner().invoke(
        app, ["scenarios", "import-eva", str(root), "--domain", DOMAIN, "-o", str(out), "--report"]
    )
    assert result.exit_code == 0, result.output
    assert "4/4 records converted, 0 failed" in result.output
    assert "validation skipped" in result.output and f"--trust {MODULE}" in result.output
    assert (out / "suite.yaml").exists()
