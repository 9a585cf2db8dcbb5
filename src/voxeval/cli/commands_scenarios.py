"""``voxeval scenarios``: check live-call scenario suites and import EVA-Bench records."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import typer
from rich.progress import Progress
from rich.table import Table

from voxeval.benchmarks.eva.scenario import ScenarioSuite, load_scenario_suite
from voxeval.benchmarks.suite_info import resolve_suite
from voxeval.cli.command_groups import command_group
from voxeval.cli.common import RedactingConsole, console, friendly_errors, print_json
from voxeval.cli.main import app
from voxeval.errors import ConfigError

scenarios_app = command_group("Live-call scenarios: validate suites, import EVA-Bench records.")
app.add_typer(scenarios_app, name="scenarios")
stdout = RedactingConsole()


def load_suite_ref(
    ref: str, trusted_modules: Sequence[str] = (), language: str | None = None
) -> ScenarioSuite:
    """A registered live-call suite name, a suite file, or a folder holding ``suite.yaml``;
    python tool hooks may come from ``trusted_modules`` (and installed plugins); ``language``
    resolves the scenarios for callers speaking it (default: the suite's language)."""
    info = resolve_suite(ref)
    if info.protocol != "live_call":
        raise ConfigError(f"suite {ref!r} uses protocol {info.protocol!r}, not live_call")
    return load_scenario_suite(info.path, trusted_modules=trusted_modules, language=language)


@scenarios_app.command("validate")
@friendly_errors
def validate(
    suite: str = typer.Argument(..., help="built-in suite name, suite file or folder"),
    as_json: bool = typer.Option(False, "--json", help="print a JSON list on stdout"),
    only: str | None = typer.Option(None, "--only", help="validate only this scenario id"),
    trust: list[str] = typer.Option(
        [],
        "--trust",
        help="a module whose functions python tool hooks may call (repeatable); "
        "like trusted_modules in a run config",
    ),
    lang: str | None = typer.Option(
        None,
        "--lang",
        help="validate the scenarios as played in this language (placeholders resolved for "
        "it, like simulation.language in a run config); default: the suite's language",
    ),
) -> None:
    """Play each scenario's expected path on its tools (no audio) and prove it reaches the
    expected database and session; then prove a wrong path is rejected, and that the
    listening reference agent reaches the expected state in a text-mode call with the scripted
    caller (the caller conveys every fact the path uses). Exit 1 on failure;
    the tool calls that failed on the expected path are listed with their arguments."""
    from voxeval.protocols.scenario_validation import validate_scenario

    loaded = load_suite_ref(suite, trust, language=lang)
    scenarios = [s for s in loaded.scenarios if only is None or s.id == only]
    if not scenarios:
        raise ConfigError(f"{loaded.path}: no scenario {only!r}")
    results = []
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("validating scenarios", total=len(scenarios))
        for scenario in scenarios:
            results.append(
                validate_scenario(
                    scenario,
                    loaded.tools_for(scenario),
                    loaded.trust,
                    loaded.task_completion,
                    loaded.tool_arguments,
                )
            )
            progress.advance(task)
    if as_json:
        print_json([r.to_dict() for r in results])
    else:
        valid = f"{sum(r.ok for r in results)}/{len(results)} valid"
        table = Table(title=f"{loaded.name} ({loaded.language}): {valid}")
        for column in ("scenario", "ok", "expected reached", "wrong rejected", "problems"):
            table.add_column(column)
        for r in results:
            problems = "" if r.ok else "\n".join([*r.problems(), r.diff]).strip()
            table.add_row(
                r.scenario,
                _mark(r.ok),
                _mark(r.expected_reached),
                _wrong_mark(r.wrong_path),
                problems,
            )
        stdout.print(table)
    if not all(r.ok for r in results):
        raise typer.Exit(1)


@friendly_errors
def import_eva(  # `voxeval import eva` (commands_import)
    source: Path = typer.Argument(
        ...,
        help="an EVA-Bench release folder (with --domain), or record files (.json/.jsonl or a "
        "folder of them, with --tools)",
    ),
    out: Path = typer.Option(..., "-o", "--out", help="folder for the new suite"),
    domain: list[str] = typer.Option(
        [],
        "--domain",
        help="release domain to import (airline, itsm, medical_hr, ...); repeatable: with "
        "several, each is written to `OUT/<domain>/`",
    ),
    lang: str = typer.Option("en", "--lang", help="the callers' language (suite language:)"),
    python_tools: bool = typer.Option(
        False,
        "--python-tools",
        help="import the release's tool module (tool_module_path) from PYTHONPATH, so --report "
        "can run it; without this and without --tools the tool names are read from the "
        "release's src/ without running it. Load the suite with --trust MODULE either way",
    ),
    tools: Path | None = typer.Option(
        None, "--tools", help="declarative tool definitions YAML (wins over --python-tools)"
    ),
    report: bool = typer.Option(
        False, "--report", help="print converted/failed records and validation counts"
    ),
    strict: bool = typer.Option(False, "--strict", help="exit 1 if any record failed"),
    as_json: bool = typer.Option(False, "--json", help="print the report as JSON on stdout"),
    name: str | None = typer.Option(None, help="suite name (default: the output folder name)"),
) -> None:
    """Convert EVA-Bench data into a voxeval live-call suite folder.

    With --domain, SOURCE is a release folder as shipped (`data/<domain>_dataset.json`,
    `data/<domain>_scenarios/<id>.json`, `configs/agents/<domain>_agent.yaml`). Every record
    that can be converted is; each one that cannot is listed with its id and field. Exit 0
    when at least one record of each domain converted, 1 when a domain converted none (or,
    with --strict, when any record failed), 2 on an unusable release folder or option."""
    if not domain:
        if tools is None:
            raise ConfigError("give --domain (a release folder) or --tools (record files)")
        from voxeval.benchmarks.eva.eva_loader import write_eva_suite

        suite_file = write_eva_suite(source, tools, out, name=name)
        console.print(f"wrote {suite_file}; check it with: voxeval scenarios validate {out}")
        return
    from voxeval.cli.eva_import_cli import ReleaseImportOptions, import_release_domains

    options = ReleaseImportOptions(lang, python_tools, tools, report, strict, as_json, name)
    if not import_release_domains(source, out, domain, options):
        raise typer.Exit(1)


def _mark(flag: bool) -> str:
    return "[green]yes[/]" if flag else "[red]no[/]"


def _wrong_mark(wrong_path: str) -> str:
    if wrong_path == "cannot_change_state":
        return "[yellow]n/a (read-only)[/]"
    if wrong_path == "unproven":
        return "[red]unproven (no slip took effect)[/]"
    return _mark(wrong_path == "rejected")
