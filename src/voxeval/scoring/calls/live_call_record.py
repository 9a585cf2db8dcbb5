"""The typed record live-call metrics score: what a finished call left behind."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from voxeval.audio import Audio
from voxeval.benchmarks.eva.scenario import Scenario
from voxeval.benchmarks.tools.db_compare import REFERENCE_SETTINGS, TaskCompletionSettings
from voxeval.simulation.timeline import Timeline


@dataclass(frozen=True)
class LiveCallRecord:
    """Any field may be missing; a metric whose inputs are missing returns ``Score.not_run``.

    ``final_db``/``expected_db`` include the auth ``session`` mapping when there is one;
    ``task_completion`` holds the suite's settings for comparing them. ``tracks`` holds the
    recorded ``user`` and ``assistant`` audio tracks (none for a text-mode call); ``pipeline`` is
    the system's kind (``voxeval.scoring.calls.call_pipeline``), which the judged metrics need."""

    timeline: Timeline | None = None
    final_db: dict[str, Any] | None = None
    expected_db: dict[str, Any] | None = None
    initial_db: dict[str, Any] | None = None
    scenario: Scenario | None = None
    task_completion: TaskCompletionSettings = REFERENCE_SETTINGS
    tracks: Mapping[str, Audio] = field(default_factory=dict)
    pipeline: str = "unknown"
    # opt-in (run config ``scoring: {turn_taking_zero_on_agent_error: true}``): an agent_error
    # ending with the caller's words unanswered zeroes turn_taking, as a timeout does
    turn_taking_zero_on_agent_error: bool = False
