"""The "Composites (EVA-A / EVA-X)" section of a system in the report, from the summary's
``composites`` entry (``voxeval.analysis.calls.composite_summary``): numbers only where a composite
is claimed, and for the rest which component did not run, on how many trials and why."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from voxeval.json_types import JSONReadObject, JSONReadValue
from voxeval.report.blocks import (
    Block,
    BulletList,
    Heading,
    Paragraph,
    TableBlock,
    fmt_mean_ci,
    fmt_num,
)
from voxeval.report.json_fields import objects, section, sections

HEADER = [
    "composite",
    "condition",
    "pass@1 [95% CI]",
    "pass@k at k=n [95% CI]",
    "pass^k at k=n [95% CI]",
    "pass@k curve (k=1..n)",
    "pass^k curve (k=1..n)",
    "scenarios",
    "trials (passed)",
]
NOT_CLAIMED = "not claimed"


def _curve(points: Sequence[JSONReadObject]) -> str:
    return " / ".join(fmt_num(p.get("mean")) for p in points) or "–"


def _at_n(points: Sequence[JSONReadObject]) -> str:
    if not points:
        return "–"
    last = points[-1]
    return f"{fmt_mean_ci(last)} (k={last.get('k')})"


def _row(label: str, condition: str, entry: JSONReadObject) -> list[str]:
    counts = [str(entry.get("n_scenarios", 0)), f"{entry.get('trials', 0)} "]
    counts[1] += f"({entry.get('passed_trials', 0)})" if entry.get("claimed") else "(–)"
    if not entry.get("claimed"):
        return [label, condition, NOT_CLAIMED, "–", "–", "–", "–", *counts]
    at_k, hat_k = objects(entry.get("pass_at_k")), objects(entry.get("pass_hat_k"))
    first = entry.get("pass_at_1")
    return [
        label,
        condition,
        fmt_mean_ci(first) if isinstance(first, Mapping) else "–",
        _at_n(at_k),
        _at_n(hat_k),
        _curve(at_k),
        _curve(hat_k),
        *counts,
    ]


def _reasons(tally: JSONReadObject) -> str:
    reasons = section(tally.get("reasons"))
    return "; ".join(f"{reason} ({n})" for reason, n in reasons.items())


def _why_not_claimed(label: str, condition: str, entry: JSONReadObject) -> list[str]:
    total = entry.get("trials", 0)
    items = [
        f"{label}, {condition}: {metric} did not run on {tally.get('trials', 0)} of {total} "
        f"trials: {_reasons(tally)}"
        for metric, tally in sections(entry.get("missing"))
    ]
    not_scored = section(entry.get("not_scored"))
    if not_scored.get("trials"):
        items.append(
            f"{label}, {condition}: {not_scored['trials']} of {total} planned trials not scored "
            f"(the design is incomplete): {_reasons(not_scored)}"
        )
    if not items:
        items.append(f"{label}, {condition}: no trial to score")
    return items


def composite_blocks(composites: JSONReadValue) -> list[Block]:
    """The table of every composite and condition, the definitions, and why a composite is
    not claimed where it is not."""
    if not isinstance(composites, Mapping) or not composites:
        return []
    rows: list[list[str]] = []
    unclaimed: list[str] = []
    definitions: list[str] = []
    for name, composite in sections(composites):
        label = str(composite.get("label", name))
        definitions.append(f"{label}: {composite.get('definition')}")
        if composite.get("note"):
            definitions[-1] += f". {composite['note']}"
        for condition, entry in sections(composite.get("by_condition")):
            rows.append(_row(label, condition, entry))
            if not entry.get("claimed"):
                unclaimed += _why_not_claimed(label, condition, entry)
        if not composite.get("by_condition"):
            unclaimed.append(f"{label}: {composite.get('reason', 'no trials')}")
    blocks: list[Block] = [
        Heading(3, "Composites (EVA-A / EVA-X)"),
        Paragraph(
            "pass@1 = mean over scenarios of each scenario's share of passing trials; "
            "pass@k = chance that at least one of k trials drawn from a scenario passes, "
            "pass^k = chance that all k pass (at k = n, the trials per scenario, then the "
            "curve for k = 1..n); 95% bootstrap CIs over scenarios. A composite is claimed "
            "for a condition only when every component ran on every planned trial there; a "
            "trial whose system under test failed counts as a failed trial."
        ),
        BulletList(definitions),
    ]
    if rows:
        blocks.append(TableBlock(HEADER, rows))
    if unclaimed:
        blocks += [Paragraph("Not claimed (no number is given):"), BulletList(unclaimed)]
    return blocks
