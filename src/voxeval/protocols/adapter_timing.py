"""Which timing metrics of a system were decided by voxeval's turn adapter, from its calls.

A turn-based system (scripted, cascade, http, Realtime with ``turn_detection: none``) cannot
hear the line: voxeval's ``TurnTakingAdapter`` decides for it when the caller's turn ended
(``eot_silence_ms``, ``patience_ms``), when caller speech stops its reply (``barge_in_ms``,
``min_interruption_words``) and what counts as speech (the VAD). Its yield latency, its
backchannel and false yields and its false ends of turn then measure those settings, not the
system. Each ``call.json`` records them under ``turn_handling``; the summary names the
metrics they decide and shows the settings beside them, so nobody reads them as the
system's own behaviour.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from voxeval.json_types import JSONObject
from voxeval.protocols.latency_basis import recorded_calls

# metric -> the adapter settings that decide it
DECIDED_BY: dict[str, tuple[str, ...]] = {
    "response_latency": ("eot_silence_ms", "patience_ms", "vad"),
    "turn_taking": ("eot_silence_ms", "patience_ms", "barge_in_ms", "min_interruption_words"),
    "yield_latency": ("barge_in_ms", "min_interruption_words", "vad"),
    "barge_in_handling_rate": ("barge_in_ms", "min_interruption_words", "vad"),
    "backchannel_yield_rate": ("barge_in_ms", "min_interruption_words", "vad"),
    "false_end_of_turn_rate": ("eot_silence_ms", "patience_ms", "vad"),
    "false_yield_rate": ("barge_in_ms", "min_interruption_words", "vad"),
    "talk_over_ratio": ("barge_in_ms", "min_interruption_words"),
}
SETTINGS = ("eot_silence_ms", "patience_ms", "barge_in_ms", "min_interruption_words", "vad")


def adapter_timing(unit_dirs: Iterable[Path]) -> JSONObject | None:
    """For a system whose calls ran behind the turn adapter: the metrics its settings decide
    and the settings (a list of values when calls differ). None when no recorded call went
    through the adapter (a streaming agent decides its own timing)."""
    adapted = calls = 0
    seen: dict[str, list[Any]] = {k: [] for k in SETTINGS}
    for call in recorded_calls(unit_dirs):
        calls += 1
        handling = call.get("turn_handling")
        if not isinstance(handling, dict) or not handling.get("adapter"):
            continue
        adapted += 1
        for key in SETTINGS:
            value = handling.get(key)
            if value not in seen[key]:
                seen[key].append(value)
    if adapted == 0:
        return None
    settings = {k: v[0] if len(v) == 1 else v for k, v in seen.items()}
    return {
        "decided_by": "voxeval turn adapter",
        "calls": adapted,
        "calls_recorded": calls,
        "settings": settings,
        "metrics": {m: list(keys) for m, keys in DECIDED_BY.items()},
    }
