"""``voxeval scenarios import-eva EVA_ROOT --domain NAME``: the exit codes, the per-record
failure list and the ``--report`` validation counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tests.benchmarks.eva_release_fixture import (
    DOMAIN,
    MODULE,
    compare_handles_plain_values,
    forget_tool_module,
    install_release,
    write_release,
)
from voxeval.cli.main import app


def _import(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["scenarios", "import-eva", *args])
    return result.exit_code, result.stdout, result.output


def test_release_import_writes_a_suite_and_lists_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = install_release(tmp_path / "eva", monkeypatch)
    out = tmp_path / "suite"
    code, stdout, output = _import(
        str(root), "--domain", DOMAIN, "--lang", "es", "--python-tools", "-o", str(out), "--json"
    )
    assert code == 0, output
    (summary,) = json.loads(stdout)
    assert (summary["records"], summary["converted"], summary["failed"]) == (4, 4, [])
    assert sorted(p.stem for p in (out / "scenarios").glob("*.yaml")) == [
        "1.1.1",
        "1.2.1",
        "2.1.1",
        "3.1.1",
    ]
    assert yaml.safe_load((out / "suite.yaml").read_text())["language"] == "es"
    assert f"--trust {MODULE}" in output  # how to validate it


def test_failed_records_are_listed_and_strict_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = install_release(tmp_path / "eva", monkeypatch)
    (root / "data" / f"{DOMAIN}_scenarios" / "2.1.1.json").unlink()
    args = [str(root), "--domain", DOMAIN, "--python-tools", "-o", str(tmp_path / "s")]
    code, stdout, output = _import(*args)
    assert code == 0, output
    assert "3/4 records converted, 1 failed" in stdout
    assert "record 2.1.1: parcel_scenarios/2.1.1.json: initial database file not found" in stdout
    code, _, _ = _import(*args, "--strict")
    assert code == 1


def test_nothing_converted_exits_1_and_says_why(tmp_path: Path) -> None:
    forget_tool_module()
    root = write_release(tmp_path / "eva")  # the tool module is not importable
    code, stdout, output = _import(
        str(root), "--domain", DOMAIN, "--python-tools", "-o", str(tmp_path / "s")
    )
    assert code == 1, output
    assert "0/4 records converted, 4 failed" in stdout
    assert "tools without a definition: get_parcel, reroute_parcel, issue_refund" in stdout
    assert "cannot be imported" in stdout
    assert not (tmp_path / "s" / "suite.yaml").exists()


def test_unusable_release_folder_or_options_exit_2(tmp_path: Path) -> None:
    code, _, output = _import(str(tmp_path), "--domain", "airline", "-o", str(tmp_path / "s"))
    assert code == 2 and "airline_dataset.json:notfound" in "".join(output.split())
    code, _, output = _import(str(tmp_path), "-o", str(tmp_path / "s"))
    assert code == 2 and "give--domain" in "".join(output.split())


@pytest.mark.skipif(
    not compare_handles_plain_values(),
    reason="comparing databases with _current_date needs the eva-hash db_compare change",
)
def test_report_counts_validation_outcomes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = install_release(tmp_path / "eva", monkeypatch)
    code, stdout, output = _import(
        str(root), "--domain", DOMAIN, "--python-tools", "-o", str(tmp_path / "s"), "--report"
    )
    assert code == 0, output
    assert "4/4 records converted, 0 failed" in stdout
    assert (
        "validate: 4/4 reach the expected state; wrong path rejected 3, cannot change the "
        "state (read-only/refusal) 1, accepted 0"
    ) in stdout


def test_several_domains_go_to_their_own_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = install_release(tmp_path / "eva", monkeypatch)
    data = root / "data"
    (data / "post_dataset.json").write_text((data / f"{DOMAIN}_dataset.json").read_text())
    (data / f"{DOMAIN}_scenarios").rename(data / "post_scenarios")
    (data / f"{DOMAIN}_scenarios").mkdir()
    agents = root / "configs" / "agents"
    (agents / "post_agent.yaml").write_text((agents / f"{DOMAIN}_agent.yaml").read_text())
    out = tmp_path / "suites"
    args = ["--domain", DOMAIN, "--domain", "post", "--python-tools", "-o", str(out), "--json"]
    code, stdout, output = _import(str(root), *args)
    assert code == 1, output  # parcel lost its initial databases: nothing converted
    parcel, post = json.loads(stdout)
    assert (parcel["domain"], parcel["converted"], len(parcel["failed"])) == (DOMAIN, 0, 4)
    assert (post["domain"], post["converted"]) == ("post", 4)
    assert (out / "post" / "suite.yaml").exists() and not (out / DOMAIN).exists()


def test_record_files_form_still_works(tmp_path: Path) -> None:
    from tests.benchmarks.eva.test_scenario import TOOLS, eva_record

    (tmp_path / "tools.yaml").write_text(yaml.safe_dump(TOOLS))
    records = tmp_path / "records.jsonl"
    records.write_text(json.dumps(eva_record()) + "\n")
    out = tmp_path / "out"
    code, _, output = _import(str(records), "--tools", str(tmp_path / "tools.yaml"), "-o", str(out))
    assert code == 0, output
    assert yaml.safe_load((out / "scenarios" / "1.2.1.yaml").read_text())["id"] == "1.2.1"
