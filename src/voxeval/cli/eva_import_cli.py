"""``voxeval import eva EVA_ROOT --domain ...``: import each domain, write its suite and
print its summary (records converted/failed, tools without a definition, validate counts)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from voxeval.benchmarks.eva.eva_release import import_release
from voxeval.benchmarks.eva.eva_release_writer import write_release_suite
from voxeval.cli.common import RedactingConsole, console, print_json
from voxeval.protocols.eva_import_report import ImportReport, build_import_report

stdout = RedactingConsole()


@dataclass(frozen=True)
class ReleaseImportOptions:
    lang: str
    python_tools: bool
    tools: Path | None
    report: bool
    strict: bool
    as_json: bool
    name: str | None


def import_release_domains(
    root: Path, out: Path, domains: Sequence[str], options: ReleaseImportOptions
) -> bool:
    """Import every domain (one domain: into ``out``; several: ``out/<domain>``); False when
    the exit code must be 1 (a domain converted nothing, or --strict and a record failed)."""
    ok = True
    summaries = []
    for domain in domains:
        target = out if len(domains) == 1 else out / domain
        summary, written = _import_domain(root, target, domain, options)
        summaries.append(summary)
        ok = ok and written and not (options.strict and summary.failed)
    if options.as_json:
        print_json([s.to_dict() for s in summaries])
    return ok


def _import_domain(
    root: Path, out: Path, domain: str, options: ReleaseImportOptions
) -> tuple[ImportReport, bool]:
    result = import_release(
        root,
        domain,
        options.lang,
        python_tools=options.python_tools,
        tool_definitions=options.tools,
    )
    suite_file = write_release_suite(result, out, options.name) if result.scenarios else None
    # release code runs here only when asked for (--python-tools); tools found by reading the
    # release's source are trusted at run time (--trust), so --report cannot validate them
    runnable = not result.python_module or result.python_module_imported
    trusted = [result.python_module] if result.python_module and runnable else []
    validate = options.report and suite_file is not None and runnable
    if options.report and suite_file is not None and not runnable:
        result.notes.append(
            f"validation skipped: the tools are the release's Python code ({result.python_module});"
            " give --python-tools (the release's src/ on PYTHONPATH) to let --report run them, or "
            "run voxeval scenarios validate with --trust"
        )
    summary = build_import_report(result, suite_file if validate else None, trusted)
    if not options.as_json:
        _print(summary, validated=validate)
    if suite_file is not None:
        modules = [result.python_module] if result.python_module else []
        trust = "".join(f" --trust {m}" for m in modules)
        console.print(
            f"wrote {suite_file}; check it with: voxeval scenarios validate {out}{trust}",
            soft_wrap=True,
        )
    return summary, suite_file is not None


def _say(text: str) -> None:
    stdout.print(text, soft_wrap=True, highlight=False)


def _print(summary: ImportReport, validated: bool) -> None:
    _say(
        f"{summary.domain}: {summary.converted}/{summary.records} records converted, "
        f"{len(summary.failed)} failed"
    )
    for failure in summary.failed:
        _say(f"  record {failure['record']}: {failure['field']}: {failure['reason']}")
    if summary.missing_tools:
        _say(f"  tools without a definition: {', '.join(summary.missing_tools)}")
    for note in summary.notes:
        _say(f"  note: {note}")
    if validated:
        _say(
            f"validate: {summary.reached_expected}/{summary.validated} reach the expected "
            f"state; wrong path rejected {summary.wrong_rejected}, cannot change the state "
            f"(read-only/refusal) {summary.wrong_cannot_change_state}, accepted "
            f"{summary.wrong_accepted}, unproven (no slip took effect) {summary.wrong_unproven}"
        )
        for scenario_id, problems in summary.invalid.items():
            _say(f"  {scenario_id}: " + "; ".join(p for p in problems if p))
