"""Scenario code is trusted code: python tool hooks load only from trusted modules or installed
plugins; tables are checked at load; ``scenarios validate`` names the failing tool calls."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from tests.simulation.helpers import TOOLS, scenario, write_suite
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime, tool_spec
from voxeval.benchmarks.tools.tool_ops import ToolContext
from voxeval.cli.main import app
from voxeval.errors import ConfigError

THIS = "tests.benchmarks.tools.test_hook_trust"
STAMPS: list[str] = []


def stamp(ctx: ToolContext) -> dict[str, Any]:
    STAMPS.append(str(ctx.params.get("day")))
    return {"stamped": True}


def explode(ctx: ToolContext) -> None:
    raise RuntimeError("the hook broke")


def hooked_tools(function: str = f"{THIS}:stamp") -> dict[str, Any]:
    tools = copy.deepcopy(TOOLS)
    book = next(t for t in tools["tools"] if t["name"] == "book_visit")
    book["steps"].insert(0, {"python": {"function": function, "as": "stamp"}})
    return tools


def write_hooked_suite(
    root: Path, tools: dict[str, Any], scenarios: list[dict] | None = None
) -> Path:
    path = write_suite(root, scenarios)
    (root / "tools.yaml").write_text(yaml.safe_dump(tools), encoding="utf-8")
    return path


def test_untrusted_hook_is_refused_when_the_suite_loads(tmp_path: Path) -> None:
    suite = write_hooked_suite(tmp_path / "s", hooked_tools("os:system"))
    with pytest.raises(ConfigError) as err:
        load_scenario_suite(suite)
    message = str(err.value)
    assert "tools.yaml: tool book_visit: steps.0.python.function" in message
    assert "'os:system' is refused" in message and "trusted_modules" in message
    # trusting some other module changes nothing
    with pytest.raises(ConfigError, match="'os:system' is refused"):
        load_scenario_suite(suite, trusted_modules=["tests"])


def test_trusted_hook_loads_and_runs(tmp_path: Path) -> None:
    suite_path = write_hooked_suite(tmp_path / "s", hooked_tools())
    with pytest.raises(ConfigError, match=f"module '{THIS}' is not trusted"):
        load_scenario_suite(suite_path)
    suite = load_scenario_suite(suite_path, trusted_modules=[THIS])
    sc = suite.scenarios[0]
    runtime = ToolRuntime(sc, suite.tools, suite.trust)
    runtime.call("verify_member", {"member_id": "KX4", "date_of_birth": "1980-05-01"})
    before = len(STAMPS)
    record = runtime.call("book_visit", {"day": "friday"})
    assert record.error is None and STAMPS[before:] == ["friday"]


def test_inline_agent_tools_follow_the_same_rule(tmp_path: Path) -> None:
    sc = scenario()
    peek = {"name": "peek", "kind": "read", "python": f"{THIS}:stamp"}
    sc["agent"]["tools"] = [*sc["agent"]["tools"], peek]
    suite_path = write_suite(tmp_path / "s", [sc])
    with pytest.raises(ConfigError, match=r"agent\.tools\.2: tool peek: python"):
        load_scenario_suite(suite_path)
    suite = load_scenario_suite(suite_path, trusted_modules=[THIS])
    runtime = ToolRuntime(suite.scenarios[0], suite.tools, suite.trust)
    assert runtime.call("peek", {}).result == {"stamped": True}


def install_plugin(site: Path, name: str, module: str) -> None:
    """A distribution installed in ``site`` (a folder on sys.path) that declares ``module`` a
    voxeval plugin, as ``pip install`` would leave it."""
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{tool_spec.PLUGIN_GROUP}]\nacme = {module}\n")


def test_installed_plugins_are_trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = tool_spec.plugin_packages()
    assert "tests" not in before
    install_plugin(tmp_path / "site", "acme_plugin", THIS)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert tool_spec.plugin_packages() == tuple(sorted({*before, "tests"}))
    suite = load_scenario_suite(write_hooked_suite(tmp_path / "s", hooked_tools()))
    assert suite.tools["book_visit"].hook(f"{THIS}:stamp") is stamp


def test_run_config_trusted_modules(tmp_path: Path) -> None:
    suite = write_hooked_suite(tmp_path / "s", hooked_tools())
    config: dict[str, Any] = {
        "suite": str(suite),
        "systems": [{"name": "good", "type": "scripted"}],
        "simulation": {"caller": "scripted", "mode": "text"},
    }
    path = tmp_path / "live.yaml"
    path.write_text(yaml.safe_dump(config))
    refused = CliRunner().invoke(app, ["run", str(path), "--out", str(tmp_path / "r1")])
    assert refused.exit_code == 2
    assert "is not trusted" in refused.output
    assert not list((tmp_path / "r1").rglob("call.json"))  # refused before any call
    path.write_text(yaml.safe_dump({**config, "trusted_modules": [THIS]}))
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(tmp_path / "r2")])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "r2" / "report" / "summary.json").read_text())
    assert summary["systems"]["good"]["task_completion"]["mean"] == 1.0


def test_undefined_table_is_an_error_at_load(tmp_path: Path) -> None:
    tools = copy.deepcopy(TOOLS)
    tools["tools"][0]["steps"][0]["lookup"]["table"] = "memebrs"  # a typo
    suite = write_hooked_suite(tmp_path / "s", tools)
    with pytest.raises(ConfigError) as err:
        load_scenario_suite(suite)
    message = str(err.value)
    assert "tool 'verify_member': steps.0.lookup.table: table 'memebrs' is not defined" in message
    assert "scenario book-1" in message and "(tables: members)" in message


def test_validate_lists_the_failing_tool_calls(tmp_path: Path) -> None:
    sc = scenario()
    sc["agent_script"][1]["tool_calls"][0]["arguments"]["date_of_birth"] = "1980-01-05"
    suite = write_suite(tmp_path / "s", [sc])
    result = CliRunner().invoke(app, ["scenarios", "validate", str(suite), "--json"])
    assert result.exit_code == 1
    (row,) = json.loads(result.stdout)
    assert row["ok"] is False
    assert row["tool_errors"][0] == (
        'step 1: verify_member({"date_of_birth": "1980-01-05", "member_id": "KX4"}): '
        "precondition_failed: mismatch"
    )
    assert any("book_visit" in e and "not_authenticated" in e for e in row["tool_errors"])
    table = CliRunner().invoke(app, ["scenarios", "validate", str(suite)])
    assert "verify_member" in table.stdout and "mismatch" in table.stdout


def test_validate_names_a_crashing_hook_and_takes_trust(tmp_path: Path) -> None:
    suite = write_hooked_suite(tmp_path / "s", hooked_tools(f"{THIS}:explode"))
    refused = CliRunner().invoke(app, ["scenarios", "validate", str(suite)])
    assert refused.exit_code == 2 and "is not trusted" in refused.output
    result = CliRunner().invoke(
        app, ["scenarios", "validate", str(suite), "--json", "--trust", THIS]
    )
    assert result.exit_code == 1
    (row,) = json.loads(result.stdout)
    assert row["errors"] == ['step 2: book_visit({"day": "friday"}): RuntimeError: the hook broke']
