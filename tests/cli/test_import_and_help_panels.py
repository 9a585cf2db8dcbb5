"""One import shape and a task-grouped help page (issue 41, points 4 and 6): ``voxeval import
wildspeech|mtalk|eva``; the former names stay as hidden aliases printing a deprecation note;
``voxeval --help`` lists commands by task with ``run`` first."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from typer.testing import CliRunner

from tests.benchmarks.test_wildspeech_release import release_rows, write_parquet
from voxeval.cli.main import HELP_PANELS, app


def help_text(*args: str) -> str:
    result = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def panels(text: str) -> list[tuple[str, list[str]]]:
    found: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        title = re.match(r"╭─ (.+?) ─", line)
        if title:
            found.append((title.group(1), []))
            continue
        command = re.match(r"│ ([a-z][a-z-]*)\s{2,}", line)
        if command and found:
            found[-1][1].append(command.group(1))
    return found


def test_help_groups_commands_by_task_with_run_first() -> None:
    shown = [(title, names) for title, names in panels(help_text()) if title != "Options"]
    assert [title for title, _ in shown] == list(HELP_PANELS)
    assert shown[0][1][0] == "run"
    for title, names in shown:
        assert set(names) == set(HELP_PANELS[title])
    listed = {name for _, names in shown for name in names}
    assert not {"wildspeech-suite", "mtalk-suite"} & listed  # hidden aliases


def test_import_lists_the_three_releases() -> None:
    names = {n for _, ns in panels(help_text("import")) for n in ns}
    assert {"wildspeech", "mtalk", "eva"} <= names
    assert "import-eva" not in {n for _, ns in panels(help_text("scenarios")) for n in ns}


def test_import_wildspeech_and_its_old_name_write_the_same_suite(tmp_path: Path) -> None:
    data = write_parquet(release_rows(), tmp_path / "release" / "test.parquet")
    cli = CliRunner()
    new = cli.invoke(app, ["import", "wildspeech", str(data), "-o", str(tmp_path / "new")])
    assert new.exit_code == 0, new.output
    assert "deprecated" not in new.output
    old = cli.invoke(app, ["wildspeech-suite", str(data), "-o", str(tmp_path / "old")])
    assert old.exit_code == 0, old.output
    assert "`voxeval wildspeech-suite` is deprecated" in old.stderr
    assert "use `voxeval import wildspeech`" in old.stderr
    written_new = yaml.safe_load((tmp_path / "new" / "suite.yaml").read_text())
    written_old = yaml.safe_load((tmp_path / "old" / "suite.yaml").read_text())
    assert written_new == written_old and written_new["name"] == "wildspeech"


def test_old_eva_and_mtalk_names_print_the_note_and_run_the_same_command(
    tmp_path: Path,
) -> None:
    cli = CliRunner()
    missing = str(tmp_path / "nowhere")
    for old, new in (
        (["scenarios", "import-eva"], ["import", "eva"]),
        (["mtalk-suite"], ["import", "mtalk"]),
    ):
        before = cli.invoke(app, [*old, missing, "-o", str(tmp_path / "o")])
        after = cli.invoke(app, [*new, missing, "-o", str(tmp_path / "o")])
        assert before.exit_code == after.exit_code != 0
        assert f"use `voxeval {' '.join(new)}`" in before.stderr
        assert "deprecated" not in after.stderr
