"""A finished run as the study builder reads it: its context (config, store, protocol), the
units that are done (trial 0: a study asks listeners about each system's answer once), and
which of those the system under test failed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from voxeval.api.context import RunContext
from voxeval.errors import ConfigError
from voxeval.runner.execute import open_run
from voxeval.store import RunReader
from voxeval.store.records import UnitRecord

PROTOCOLS_WITH_STUDIES = ("multi_turn", "single_turn")


@dataclass
class RunSource:
    reader: RunReader
    ctx: RunContext
    protocol: str
    units: list[UnitRecord]  # done units of trial 0, in plan order
    not_done: list[UnitRecord]  # planned, running or failed on our side (left out)

    @property
    def run_dir(self) -> Path:
        return self.reader.path

    @property
    def run_id(self) -> str:
        return self.reader.run_id

    def unit_dir(self, unit: UnitRecord) -> Path:
        return self.reader.unit_dir(unit)

    def systems(self) -> list[str]:
        return self.reader.systems()


def open_run_source(run_dir: Path, systems: Sequence[str] = ()) -> RunSource:
    """Open ``run_dir``; ``systems`` keeps only those systems (each must be in the run)."""
    reader = RunReader(run_dir)
    protocol = reader.protocol
    if protocol not in PROTOCOLS_WITH_STUDIES:
        raise ConfigError(
            f"{run_dir}/run.yaml: field 'suite': a {protocol or 'unknown'} run; studies are "
            f"built from {' or '.join(PROTOCOLS_WITH_STUDIES)} runs"
        )
    known = reader.systems()
    unknown = [name for name in systems if name not in known]
    if unknown:
        raise ConfigError(
            f"--systems: {', '.join(unknown)} not in run {run_dir} (systems: {', '.join(known)})"
        )
    wanted = set(systems or known)
    first_trial = [u for u in reader.units() if u.trial == 0 and u.system in wanted]
    return RunSource(
        reader=reader,
        ctx=open_run(reader),
        protocol=protocol,
        units=[u for u in first_trial if u.status == "done"],
        not_done=[u for u in first_trial if u.status != "done"],
    )
