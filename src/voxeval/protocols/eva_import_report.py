"""The ``import-eva --report`` summary for one domain: records converted / failed (with the
field and reason) and what ``scenarios validate`` finds on the written suite."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from voxeval.benchmarks.eva.eva_release import EvaImport
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.errors import VoxevalError
from voxeval.json_types import JSONObject
from voxeval.protocols.scenario_validation import ScenarioCheck, validate_scenario


@dataclass
class ImportReport:
    domain: str
    records: int
    converted: int
    failed: list[dict[str, str]]  # {"record", "field", "reason"}
    missing_tools: list[str]
    notes: list[str] = field(default_factory=list)
    validated: int = 0
    reached_expected: int = 0
    wrong_rejected: int = 0
    wrong_cannot_change_state: int = 0  # read-only / refusal scenarios (not failures)
    wrong_accepted: int = 0
    # no generated wrong path took effect (every slipped call refused or a no-op): a failure
    wrong_unproven: int = 0
    # scenario id -> what validation found wrong with it
    invalid: dict[str, list[str]] = field(default_factory=dict)

    def to_dict(self) -> JSONObject:
        return asdict(self)


def build_import_report(
    result: EvaImport, suite_file: Path | None, trusted_modules: Sequence[str] = ()
) -> ImportReport:
    """Summarise ``result``; when a suite was written, load it (python tools of
    ``trusted_modules`` allowed) and validate every scenario."""
    report = ImportReport(
        domain=result.domain,
        records=result.records,
        converted=len(result.scenarios),
        failed=[asdict(f) for f in result.failures],
        missing_tools=list(result.missing_tools),
        notes=list(result.notes),
    )
    if suite_file is None:
        return report
    try:
        suite = load_scenario_suite(suite_file, trusted_modules=trusted_modules)
    except VoxevalError as exc:
        report.notes.append(f"the written suite does not load: {exc}")
        return report
    for scenario in suite.scenarios:
        check = validate_scenario(
            scenario,
            suite.tools_for(scenario),
            suite.trust,
            suite.task_completion,
            suite.tool_arguments,
        )
        _count(report, check)
    return report


def _count(report: ImportReport, check: ScenarioCheck) -> None:
    report.validated += 1
    report.reached_expected += check.expected_reached
    if check.wrong_path == "rejected":
        report.wrong_rejected += 1
    elif check.wrong_path == "cannot_change_state":
        report.wrong_cannot_change_state += 1
    elif check.wrong_path == "unproven":
        report.wrong_unproven += 1
    else:
        report.wrong_accepted += 1
    report.notes += [f"{check.scenario}: {note}" for note in check.notes]
    if not check.ok:
        report.invalid[check.scenario] = (
            [*check.problems(), check.diff] if check.diff else [*check.problems()]
        )
