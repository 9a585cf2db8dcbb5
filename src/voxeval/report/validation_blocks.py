"""The report's "Simulation validation" block of a live-call system: how many calls failed a
validation gate and were regenerated, which gate failed them, the units no attempt could
validate (failed on our side, not scored) and the gates that could not run."""

from __future__ import annotations

from collections.abc import Mapping

from voxeval.json_types import JSONReadValue
from voxeval.report.blocks import Block, BulletList, Heading, Paragraph, TableBlock
from voxeval.report.json_fields import entries, section


def validation_blocks(validation: JSONReadValue) -> list[Block]:
    """Blocks for ``summary[system]["simulation_validation"]`` (none when absent)."""
    if not isinstance(validation, Mapping) or not validation.get("validated_units"):
        return []
    attempts = validation.get("attempts")
    gates = ", ".join(str(gate) for gate in entries(validation.get("gates")))
    lines = [
        f"Calls are checked by the gates {gates or '(none)'} "
        f"before scoring; up to {attempts} attempt(s) per unit.",
        f"Units validated: {validation.get('validated_units', 0)}; regenerated: "
        f"{validation.get('regenerated_units', 0)}; failed attempts: "
        f"{validation.get('failed_attempts', 0)}; units failing validation on every attempt "
        f"(failed on our side, not scored): {validation.get('units_failing_validation', 0)}; "
        f"gates skipped because the system under test faulted: "
        f"{validation.get('units_skipped_system_fault', 0)}.",
    ]
    blocks: list[Block] = [Heading(3, "Simulation validation"), Paragraph(" ".join(lines))]
    by_gate = section(validation.get("failed_attempts_by_gate"))
    if by_gate:
        rows = [[gate, str(n)] for gate, n in sorted(by_gate.items())]
        blocks.append(TableBlock(["gate", "failed attempts"], rows))
    not_run = section(validation.get("gates_not_run"))
    if not_run:
        counts = section(validation.get("gates_not_run_attempts"))
        items = [
            f"{gate} not run on {counts.get(gate, '?')} attempt(s): {reason}"
            for gate, reason in sorted(not_run.items())
        ]
        blocks += [Paragraph("Gates that could not run (they do not fail a call):"),
                   BulletList(items)]  # fmt: skip
    return blocks
