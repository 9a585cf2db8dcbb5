"""Prove each scenario is solvable and discriminating: the scripted expected path reaches the
expected database (and session) from the initial one, and a wrong path does not."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from voxeval.benchmarks.scenario import Scenario
from voxeval.scoring.task_completion import compare_final_state
from voxeval.simulation.scripted_agent import play_script, wrong_steps
from voxeval.simulation.tool_runtime import ToolRuntime
from voxeval.simulation.tool_spec import ToolSpec


@dataclass
class ScenarioCheck:
    scenario: str
    ok: bool
    expected_reached: bool
    wrong_rejected: bool
    diff: str = ""  # readable diff of the expected path's final state ("" when it matched)
    wrong_diff: str = ""  # readable diff of the wrong path (shows why it was rejected)
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _play(scenario: Scenario, tools: Mapping[str, ToolSpec], wrong: bool) -> tuple[Any, list[str]]:
    runtime = ToolRuntime(scenario, tools)
    writes = {name for name, spec in runtime.tools.items() if spec.kind == "write"}
    steps = wrong_steps(scenario, writes) if wrong else scenario.agent_script
    errors: list[str] = []
    for n, turn in enumerate(play_script(steps, runtime)):
        for call in turn.tool_calls:
            if not call.valid:
                errors.append(f"step {n}: {call.name}: invalid call: {call.error}")
    return compare_final_state(scenario.expected_db, runtime.final_state()), errors


def validate_scenario(scenario: Scenario, tools: Mapping[str, ToolSpec]) -> ScenarioCheck:
    if not scenario.agent_script:
        return ScenarioCheck(scenario.id, False, False, False, errors=["agent_script is empty"])
    try:
        expected, errors = _play(scenario, tools, wrong=False)
        wrong, _ = _play(scenario, tools, wrong=True)
    except Exception as exc:  # a broken tool definition must not abort the whole suite
        return ScenarioCheck(
            scenario.id, False, False, False, errors=[f"{type(exc).__name__}: {exc}"]
        )
    reached = expected.value == 1.0
    rejected = wrong.value == 0.0
    if not expected.details.get("auth_success", True):
        errors.append(f"session mismatch: {expected.details.get('session_mismatch')}")
    if not rejected:
        errors.append("the wrong path also reaches the expected state; add a wrong_script")
    return ScenarioCheck(
        scenario=scenario.id,
        ok=reached and rejected and not errors,
        expected_reached=reached,
        wrong_rejected=rejected,
        diff=str(expected.details.get("diff_text", "")),
        wrong_diff=_wrong_reason(wrong.details),
        errors=errors,
    )


def _wrong_reason(details: dict[str, Any]) -> str:
    parts = []
    if not details.get("auth_success", True):
        parts.append(f"session mismatch: {details.get('session_mismatch')}")
    if details.get("diff_text"):
        parts.append(str(details["diff_text"]))
    return "\n".join(parts)
