"""Prove each scenario is solvable and discriminating: the scripted expected path reaches the
expected database (and session) from the initial one, and a wrong path does not. Every tool
call of the expected path that was refused or failed is listed with its arguments.

A scenario whose expected database equals its initial one (a read-only or refusal scenario:
the right outcome is that nothing changes) cannot reject a wrong path by its final state; its
wrong path is reported as ``cannot_change_state``, not as a failure.

The expected path is also played in a text-mode call between the scripted caller and the
listening reference agent (``conveyed``): the agent uses the caller's facts only once the
caller has said them, so a scenario whose caller cannot convey what the path needs fails."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from voxeval.benchmarks.scenario import Scenario
from voxeval.benchmarks.tools.db_compare import REFERENCE_SETTINGS, TaskCompletionSettings, db_hash
from voxeval.benchmarks.tools.tool_runtime import ToolRuntime
from voxeval.benchmarks.tools.tool_spec import HookTrust, ToolSpec
from voxeval.scoring.task_completion import compare_final_state
from voxeval.simulation.callers.scripted_caller import ScriptedCaller
from voxeval.simulation.engine import run_call
from voxeval.systems.scripted import ScriptedAgent, wrong_steps


@dataclass
class ScenarioCheck:
    scenario: str
    ok: bool
    expected_reached: bool
    wrong_rejected: bool
    diff: str = ""  # readable diff of the expected path's final state ("" when it matched)
    wrong_diff: str = ""  # readable diff of the wrong path (shows why it was rejected)
    errors: list[str] = field(default_factory=list)
    # every call of the expected path that a tool refused or failed: "step N: tool(args): why"
    tool_errors: list[str] = field(default_factory=list)
    # "rejected", "accepted" (a failure) or "cannot_change_state" (the expected database
    # equals the initial one, so no final state can tell a wrong path apart; not a failure)
    wrong_path: str = "rejected"
    # findings that do not fail the check, e.g. a session mismatch when the suite scores
    # task completion on the database alone (``task_completion.require_session: false``)
    notes: list[str] = field(default_factory=list)
    # the expected path reached in a text-mode call between the scripted caller and the
    # listening reference agent; None when not tried (a language the scripted caller lacks)
    conveyed: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def problems(self) -> list[str]:
        """What to show for a failed check: errors, then the tool errors that explain them."""
        return [*self.errors, *self.tool_errors]


class ToolCrash(Exception):
    """A tool raised (not a refusal returned to the agent) while a script was played."""

    def __init__(self, step: int, name: str, arguments: Any, exc: Exception) -> None:
        super().__init__(
            f"step {step}: {describe_call(name, arguments)}: {type(exc).__name__}: {exc}"
        )


def describe_call(name: str, arguments: Any) -> str:
    """``tool({"arg": 1})``: how a call is named in validation messages."""
    try:
        shown = json.dumps(arguments, sort_keys=True, default=str)
    except (TypeError, ValueError):
        shown = repr(arguments)
    return f"{name}({shown})"


def _play(
    scenario: Scenario,
    tools: Mapping[str, ToolSpec],
    wrong: bool,
    trust: HookTrust | None,
    settings: TaskCompletionSettings,
) -> tuple[Any, list[str], list[str]]:
    """(final-state comparison, invalid calls, tool errors) of the expected or wrong path."""
    runtime = ToolRuntime(scenario, tools, trust)
    writes = {name for name, spec in runtime.tools.items() if spec.kind == "write"}
    steps = wrong_steps(scenario, writes) if wrong else scenario.agent_script
    invalid: list[str] = []
    tool_errors: list[str] = []
    for n, step in enumerate(steps):
        for call in step.tool_calls:
            try:
                record = runtime.call(call.name, call.arguments)
            except Exception as exc:  # a crashing hook: name the step, tool and arguments
                raise ToolCrash(n, call.name, call.arguments, exc) from exc
            if record.error is None:
                continue
            where = f"step {n}: {describe_call(record.name, record.arguments)}"
            if not record.valid:
                invalid.append(f"{where}: invalid call: {record.error}")
            else:
                code = record.result.get("error") if isinstance(record.result, dict) else None
                tool_errors.append(f"{where}: {code or 'error'}: {record.error}")
    final = runtime.final_state()
    return compare_final_state(scenario.expected_db, final, settings), invalid, tool_errors


def validate_scenario(
    scenario: Scenario,
    tools: Mapping[str, ToolSpec],
    trust: HookTrust | None = None,
    settings: TaskCompletionSettings = REFERENCE_SETTINGS,
) -> ScenarioCheck:
    """Play the expected and the wrong path; ``trust`` allows python hooks of inline tools and
    ``settings`` are the suite's ``task_completion:`` settings (list order, session)."""
    if not scenario.agent_script:
        return ScenarioCheck(scenario.id, False, False, False, errors=["agent_script is empty"])
    try:
        expected, errors, tool_errors = _play(scenario, tools, False, trust, settings)
        wrong, _, _ = _play(scenario, tools, True, trust, settings)
    except Exception as exc:  # a broken tool definition must not abort the whole suite
        message = str(exc) if isinstance(exc, ToolCrash) else f"{type(exc).__name__}: {exc}"
        return ScenarioCheck(scenario.id, False, False, False, errors=[message])
    reached = expected.value == 1.0
    rejected = wrong.value == 0.0
    wrong_path = "rejected" if rejected else "accepted"
    if not rejected and keeps_state(scenario, settings):
        wrong_path = "cannot_change_state"
    notes: list[str] = []
    if not expected.details.get("auth_success", True):
        mismatch = f"session mismatch: {expected.details.get('session_mismatch')}"
        (errors if settings.require_session else notes).append(mismatch)
    if wrong_path == "accepted":
        errors.append("the wrong path also reaches the expected state; add a wrong_script")
    conveyed = None
    if reached:
        conveyed, why = _conveyed(scenario, tools, trust, settings)
        if why:
            (errors if conveyed is False else notes).append(why)
    return ScenarioCheck(
        scenario=scenario.id,
        ok=reached and wrong_path != "accepted" and not errors,
        expected_reached=reached,
        wrong_rejected=rejected,
        diff=str(expected.details.get("diff_text", "")),
        wrong_diff=_wrong_reason(wrong.details),
        errors=errors,
        tool_errors=tool_errors,
        wrong_path=wrong_path,
        notes=notes,
        conveyed=conveyed,
    )


def _conveyed(
    scenario: Scenario,
    tools: Mapping[str, ToolSpec],
    trust: HookTrust | None,
    settings: TaskCompletionSettings,
) -> tuple[bool | None, str]:
    """(reached, why not) of the expected path played by the listening reference agent in a
    text-mode call with the scripted caller (no pauses, backchannels or barge-ins)."""
    if scenario.language not in ScriptedCaller.speaks:
        return None, f"call check not run: the scripted caller has no {scenario.language!r} lines"
    agent = ScriptedAgent(script="expected", listen=True)
    runtime = ToolRuntime(scenario, tools, trust)
    try:
        result = run_call(
            scenario, ScriptedCaller(behaviour_kind="none"), agent, runtime, mode="text"
        )
    except Exception as exc:  # name the failure; validation of the other scenarios goes on
        return False, f"call check: {type(exc).__name__}: {exc}"
    score = compare_final_state(scenario.expected_db, result.final_db, settings)
    if score.value == 1.0:
        return True, ""
    asked = [s.intended_text for s in result.timeline.speech("assistant")]
    return False, (
        "the listening reference agent did not reach the expected state in a call with the "
        f"scripted caller (ended: {result.end_reason}; last agent words: "
        f"{asked[-1] if asked else '-'!r}): does the caller give every fact the path uses?"
    )


def keeps_state(scenario: Scenario, settings: TaskCompletionSettings = REFERENCE_SETTINGS) -> bool:
    """True if the expected database (session aside) is the initial one: a read-only or
    refusal scenario, where a correct call changes nothing."""
    return db_hash(scenario.initial_db, settings) == db_hash(scenario.expected_db, settings)


def _wrong_reason(details: dict[str, Any]) -> str:
    parts = []
    if not details.get("auth_success", True):
        parts.append(f"session mismatch: {details.get('session_mismatch')}")
    if details.get("diff_text"):
        parts.append(str(details["diff_text"]))
    return "\n".join(parts)
