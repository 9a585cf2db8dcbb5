"""The report's note on timing metrics that voxeval's turn adapter decided for a turn-based
system (``summary[system]["adapter_timing"]``, written by ``voxeval.protocols.adapter_timing``):
the metrics are marked in the tables and the settings that set them are shown."""

from __future__ import annotations

from collections.abc import Mapping

from voxeval.json_types import JSONReadValue
from voxeval.report.blocks import Block, Heading, Paragraph, TableBlock
from voxeval.report.json_fields import entries, section

ADAPTER_MARK = " [adapter]"


def adapter_marked(metric: str, label: str, timing: JSONReadValue) -> str:
    """``label`` with the adapter mark when ``timing`` says the adapter decided ``metric``."""
    if isinstance(timing, Mapping) and metric in section(timing.get("metrics")):
        return label + ADAPTER_MARK
    return label


def adapter_timing_blocks(timing: JSONReadValue) -> list[Block]:
    """The note and the settings table (none when the system decided its own timing)."""
    if not isinstance(timing, Mapping):
        return []
    settings = section(timing.get("settings"))
    metrics = section(timing.get("metrics"))
    text = (
        f"This system answers whole turns: in {timing.get('calls', 0)} call(s) voxeval's turn "
        "adapter decided when its caller's turn ended, when caller speech stopped its reply "
        f"and what counted as speech. Metrics marked{ADAPTER_MARK} measure these settings as "
        "much as the system; compare them only between systems run with the same settings."
    )
    rows = [
        [metric, ", ".join(f"{k} {_value(settings.get(k))}" for k in map(str, entries(keys)))]
        for metric, keys in metrics.items()
    ]
    return [
        Heading(3, "Timing set by the turn adapter"),
        Paragraph(text),
        TableBlock(["metric", "decided by"], rows),
    ]


def _value(value: JSONReadValue) -> str:
    if isinstance(value, list):
        return "/".join(_value(v) for v in value)
    if value is None:
        return "none"
    return f"{value:g}" if isinstance(value, float) else str(value)
