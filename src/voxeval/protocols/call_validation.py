"""Simulation validation with regeneration for live calls (issue #12, EVA-Bench's validation
before scoring).

After each recorded call the gates of ``simulation.validation`` run
(``voxeval.scoring.calls.simulation_gates``); their results go to ``validation.json`` in the unit
folder. A call that fails a gate is regenerated with a new seed (derived from the unit's seed
and the attempt number, so a rerun makes the same calls), after its files are moved to
``failed_attempts/attempt-<k>/`` (with that attempt's ``validation.json``). The final attempt's
files and ``validation.json`` stay in the unit folder, where scoring reads them; the archive
is never scored. When every attempt fails, the unit fails on our side: a ``HarnessFault`` of
the ``simulator`` naming the gates and reasons (not retried by the runner: the attempts are
deterministic, another round would repeat them).

A call that ended with a fault of the system under test is not regenerated: the failure is
the system's, and another attempt would give it another chance. Its gates are recorded as
skipped."""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from voxeval.atomic_files import read_json, write_json_atomic
from voxeval.errors import HarnessFault, SystemFault
from voxeval.json_types import JSONObject, JSONReadValue
from voxeval.scoring.calls.simulation_gates import GateResult, skipped_gates
from voxeval.scoring.judge import judge_seed_offset
from voxeval.scoring.score import Score
from voxeval.simulation.recorder import (
    CALL_FILE,
    DIFF_FILE,
    EVENTS_FILE,
    FINAL_DB_FILE,
    INITIAL_DB_FILE,
    TRACK_FILES,
)
from voxeval.simulation.simulation_config import ValidationConfig

VALIDATION_FILE = "validation.json"
# Judge seeds of attempt k are offset by (k - 1) * this: well above the seeds one grading uses
# (its repeats and format retries), so no two attempts share a seed.
ATTEMPT_SEED_STRIDE = 1_000_003
ARCHIVE_DIR = "failed_attempts"
# What one call attempt leaves in the unit folder (moved together to the archive).
ATTEMPT_FILES = (
    *TRACK_FILES.values(),
    EVENTS_FILE,
    CALL_FILE,
    INITIAL_DB_FILE,
    FINAL_DB_FILE,
    DIFF_FILE,
    VALIDATION_FILE,
)


@dataclass(frozen=True)
class AttemptValidation:
    """The gates' results on one call attempt; ``skipped`` says why none ran."""

    attempt: int
    seed: int
    gates: dict[str, GateResult]
    skipped: str | None = None

    @property
    def failed_gates(self) -> list[str]:
        return [name for name, r in self.gates.items() if r.status == "fail"]

    @property
    def passed(self) -> bool:
        return not self.failed_gates

    def failure_text(self) -> str:
        return "; ".join(f"{g}: {self.gates[g].reason}" for g in self.failed_gates)

    def to_dict(self, attempts_allowed: int) -> dict[str, JSONReadValue]:
        return {
            "attempt": self.attempt,
            "attempts_allowed": attempts_allowed,
            "seed": self.seed,
            "passed": None if self.skipped else self.passed,  # not validated: not a pass
            "failed_gates": list(self.failed_gates),
            "skipped": self.skipped,
            "gates": {name: r.to_dict() for name, r in self.gates.items()},
        }


def clear_attempts(unit_dir: Path) -> None:
    """Forget an earlier interaction's validation (a runner retry starts the unit over)."""
    shutil.rmtree(unit_dir / ARCHIVE_DIR, ignore_errors=True)
    (unit_dir / VALIDATION_FILE).unlink(missing_ok=True)


def archive_attempt(unit_dir: Path, attempt: int) -> Path:
    """Move the attempt's files into ``failed_attempts/attempt-<attempt>/``."""
    dest = unit_dir / ARCHIVE_DIR / f"attempt-{attempt}"
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for name in ATTEMPT_FILES:
        path = unit_dir / name
        if path.exists():
            path.replace(dest / name)
    return dest


def run_validated_call(
    unit_dir: Path,
    settings: ValidationConfig,
    seed_for: Callable[[int], int],
    call_once: Callable[[int], SystemFault | None],
    check: Callable[[], dict[str, GateResult]],
) -> AttemptValidation:
    """Make up to ``settings.attempts`` calls until one passes the gates; returns its
    validation. ``call_once(seed)`` runs and records one call (returning the system's fault,
    if any); ``check()`` runs the gates on the recording in ``unit_dir``. Raises the system's
    fault (recorded, gates skipped) or, when every attempt failed, a ``HarnessFault``."""
    clear_attempts(unit_dir)
    allowed = settings.attempts
    last: AttemptValidation | None = None
    for attempt in range(1, allowed + 1):
        seed = seed_for(attempt)
        fault = call_once(seed)
        if fault is not None:
            why = f"the system under test faulted ({fault.cause}); the call is not regenerated"
            last = AttemptValidation(attempt, seed, skipped_gates(settings.gates, why), why)
            write_json_atomic(unit_dir / VALIDATION_FILE, last.to_dict(allowed))
            raise fault
        # A regeneration may record the very same call (a deterministic caller and agent):
        # its gates' judge calls are seeded apart so the cache cannot hand back the verdict
        # the previous attempt got (the first attempt keeps its seeds, and its cache entries).
        with judge_seed_offset((attempt - 1) * ATTEMPT_SEED_STRIDE):
            gates = check()
        last = AttemptValidation(attempt, seed, gates)
        write_json_atomic(unit_dir / VALIDATION_FILE, last.to_dict(allowed))
        if last.passed:
            return last
        if attempt < allowed:
            archive_attempt(unit_dir, attempt)
    assert last is not None  # attempts >= 1
    raise HarnessFault(
        f"simulation validation failed on all {allowed} attempt(s); last attempt: "
        f"{last.failure_text()} (earlier attempts in {unit_dir / ARCHIVE_DIR})",
        component="simulator",
        retryable=False,
    )


def stored_gate_scores(unit_dir: Path) -> dict[str, Score]:
    """The metric scores the gates of the unit's final attempt computed (empty when none)."""
    data = read_json(unit_dir / VALIDATION_FILE)
    if not isinstance(data, dict):
        return {}
    scores: dict[str, Score] = {}
    for gate, result in (data.get("gates") or {}).items():
        scores.update(GateResult.from_dict(gate, result).scores)
    return scores


def validation_summary(unit_dirs: Iterable[Path], settings: ValidationConfig) -> JSONObject:
    """Counts over the units' ``validation.json`` files (final and archived attempts)."""
    validated = regenerated = failed_attempts = failing = skipped_units = 0
    by_gate: Counter[str] = Counter()
    not_run: dict[str, str] = {}
    not_run_counts: Counter[str] = Counter()
    for unit_dir in unit_dirs:
        final = read_json(unit_dir / VALIDATION_FILE)
        archived = sorted((unit_dir / ARCHIVE_DIR).glob(f"attempt-*/{VALIDATION_FILE}"))
        if not isinstance(final, dict) and not archived:
            continue
        validated += 1
        regenerated += bool(archived)
        attempts = [read_json(path) for path in archived]
        if isinstance(final, dict):
            attempts.append(final)
            failing += bool(final.get("failed_gates"))
            skipped_units += bool(final.get("skipped"))
        for data in attempts:
            if not isinstance(data, dict):
                continue
            failed = list(data.get("failed_gates") or [])
            failed_attempts += bool(failed)
            by_gate.update(failed)
            for gate, result in (data.get("gates") or {}).items():
                if result.get("status") == "not_run":
                    not_run.setdefault(gate, str(result.get("reason")))
                    not_run_counts[gate] += 1
    return {
        "attempts": settings.attempts,
        "gates": list(settings.gates),
        "validated_units": validated,
        "regenerated_units": regenerated,
        "failed_attempts": failed_attempts,
        "failed_attempts_by_gate": dict(sorted(by_gate.items())),
        "units_failing_validation": failing,
        "units_skipped_system_fault": skipped_units,
        "gates_not_run": dict(sorted(not_run.items())),
        "gates_not_run_attempts": dict(sorted(not_run_counts.items())),
    }
