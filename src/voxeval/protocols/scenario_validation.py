"""Prove each scenario is solvable and discriminating: the scripted expected path reaches the
expected database (and session) from the initial one, and a wrong path does not. Every tool
call of the expected path that was refused or failed is listed with its arguments.

A scenario whose expected database equals its initial one (a read-only or refusal scenario:
the right outcome is that nothing changes) cannot reject a wrong path by its final state; its
wrong path is reported as ``cannot_change_state``, not as a failure.

A generated wrong path (no ``wrong_script``) proves something only when its slipped tool call
runs and changes the state: a slip the tools refuse leaves the state as doing nothing would,
and rejecting that shows nothing about telling a wrong action from the right one. Such a
scenario is ``unproven`` (a failure) unless another slip takes effect.

The expected path is also played in a text-mode call between the scripted caller and the
listening reference agent (``conveyed``): the agent uses the caller's facts only once the
caller has said them, so a scenario whose caller cannot convey what the path needs fails."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import islice

from voxeval.benchmarks.eva.scenario import Scenario, ScriptStep
from voxeval.benchmarks.tools.argument_coercion import STRICT, ToolArguments
from voxeval.benchmarks.tools.db_compare import REFERENCE_SETTINGS, TaskCompletionSettings, db_hash
from voxeval.benchmarks.tools.tool_runtime import ToolRuntime, resolve_scenario_tools
from voxeval.benchmarks.tools.tool_spec import HookTrust, ToolSpec
from voxeval.json_types import JSONObject, JSONReadObject, JSONReadValue
from voxeval.scoring.calls.task_completion import compare_final_state
from voxeval.scoring.score import Score
from voxeval.simulation.callers.scripted_caller import ScriptedCaller
from voxeval.simulation.engine import run_call
from voxeval.systems.scripted import ScriptedAgent, wrong_candidates, wrong_steps


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
    # "rejected", "accepted" (a failure), "unproven" (a failure: no generated wrong path took
    # effect, see _wrong_path) or "cannot_change_state" (the expected database equals the
    # initial one, so no final state can tell a wrong path apart; not a failure)
    wrong_path: str = "rejected"
    # findings that do not fail the check, e.g. a session mismatch when the suite opts out of
    # the reference's session rule (``task_completion.require_session: false``)
    notes: list[str] = field(default_factory=list)
    # the expected path reached in a text-mode call between the scripted caller and the
    # listening reference agent; None when not tried (a language the scripted caller lacks)
    conveyed: bool | None = None

    def to_dict(self) -> JSONObject:
        return asdict(self)

    def problems(self) -> list[str]:
        """What to show for a failed check: errors, then the tool errors that explain them."""
        return [*self.errors, *self.tool_errors]


# generated wrong paths tried before a scenario's wrong path is called unproven
MAX_WRONG_CANDIDATES = 24


class ToolCrash(Exception):
    """A tool raised (not a refusal returned to the agent) while a script was played."""

    def __init__(self, step: int, name: str, arguments: JSONReadValue, exc: Exception) -> None:
        super().__init__(
            f"step {step}: {describe_call(name, arguments)}: {type(exc).__name__}: {exc}"
        )


def describe_call(name: str, arguments: JSONReadValue) -> str:
    """``tool({"arg": 1})``: how a call is named in validation messages."""
    try:
        shown = json.dumps(arguments, sort_keys=True, default=str)
    except (TypeError, ValueError):
        shown = repr(arguments)
    return f"{name}({shown})"


@dataclass
class _Played:
    comparison: Score  # the final-state comparison
    invalid: list[str]
    tool_errors: list[str]
    coerced: list[str]
    # the watched call ran without error and changed the database or session
    watched_changed: bool = False


def _play(
    scenario: Scenario,
    tools: Mapping[str, ToolSpec],
    steps: Sequence[ScriptStep],
    trust: HookTrust | None,
    settings: TaskCompletionSettings,
    arguments: ToolArguments,
    watch: tuple[int, int] | None = None,
) -> _Played:
    """Play ``steps`` on a fresh runtime: the final-state comparison, invalid calls, tool
    errors, converted argument types, and whether the ``watch``ed (step, call) took effect."""
    runtime = ToolRuntime(scenario, tools, trust, arguments)
    invalid: list[str] = []
    tool_errors: list[str] = []
    coerced: list[str] = []
    watched_changed = False
    for n, step in enumerate(steps):
        for c, call in enumerate(step.tool_calls):
            before = runtime.final_state() if (n, c) == watch else None
            try:
                record = runtime.call(call.name, call.arguments)
            except Exception as exc:  # a crashing hook: name the step, tool and arguments
                raise ToolCrash(n, call.name, call.arguments, exc) from exc
            if before is not None:
                watched_changed = record.error is None and runtime.final_state() != before
            where = f"step {n}: {describe_call(record.name, record.arguments)}"
            coerced += [
                f"{where}: argument type converted: {m}" for m in record.argument_mismatches
            ]
            if record.error is None:
                continue
            if not record.valid:
                invalid.append(f"{where}: invalid call: {record.error}")
            else:
                code = record.result.get("error") if isinstance(record.result, dict) else None
                tool_errors.append(f"{where}: {code or 'error'}: {record.error}")
    comparison = compare_final_state(scenario.expected_db, runtime.final_state(), settings)
    return _Played(comparison, invalid, tool_errors, coerced, watched_changed)


def _wrong_path(
    scenario: Scenario,
    tools: Mapping[str, ToolSpec],
    trust: HookTrust | None,
    settings: TaskCompletionSettings,
    arguments: ToolArguments,
) -> tuple[str, Score | None]:
    """(verdict, final-state comparison) of the wrong path.

    A scenario's own ``wrong_script`` is played as written. A generated one must prove that
    the check tells a wrong action apart: its slipped call has to run and change the state.
    A slip the tools refuse (or that writes nothing) leaves the state as a do-nothing agent
    would, so the candidates are tried in order (``wrong_candidates``) until one takes
    effect; if none does, the verdict is ``unproven``, never ``rejected``."""
    keeps = keeps_state(scenario, settings)
    if scenario.wrong_script or keeps:
        steps = wrong_steps(scenario, _writes(scenario, tools, trust))
        wrong = _play(scenario, tools, steps, trust, settings, arguments).comparison
        if wrong.value == 0.0:
            return "rejected", wrong
        return ("cannot_change_state" if keeps else "accepted"), wrong
    first = None
    available = resolve_scenario_tools(scenario, tools, trust)
    schemas = {name: spec.parameters for name, spec in available.items()}
    candidates = wrong_candidates(scenario, _writes(scenario, tools, trust), schemas)
    for steps, target in islice(candidates, MAX_WRONG_CANDIDATES):
        played = _play(scenario, tools, steps, trust, settings, arguments, watch=target)
        first = first or played.comparison
        if played.watched_changed:
            verdict = "rejected" if played.comparison.value == 0.0 else "accepted"
            return verdict, played.comparison
    return "unproven", first


def _writes(scenario: Scenario, tools: Mapping[str, ToolSpec], trust: HookTrust | None) -> set[str]:
    available = resolve_scenario_tools(scenario, tools, trust)
    return {name for name, spec in available.items() if spec.kind == "write"}


def validate_scenario(
    scenario: Scenario,
    tools: Mapping[str, ToolSpec],
    trust: HookTrust | None = None,
    settings: TaskCompletionSettings = REFERENCE_SETTINGS,
    arguments: ToolArguments = STRICT,
) -> ScenarioCheck:
    """Play the expected and the wrong path; ``trust`` allows python hooks of inline tools,
    ``settings`` are the suite's ``task_completion:`` settings (list order, session) and
    ``arguments`` its ``tool_arguments`` setting (strict or coerce)."""
    if not scenario.agent_script:
        return ScenarioCheck(scenario.id, False, False, False, errors=["agent_script is empty"])
    try:
        played = _play(scenario, tools, scenario.agent_script, trust, settings, arguments)
        wrong_path, wrong = _wrong_path(scenario, tools, trust, settings, arguments)
    except Exception as exc:  # a broken tool definition must not abort the whole suite
        message = str(exc) if isinstance(exc, ToolCrash) else f"{type(exc).__name__}: {exc}"
        return ScenarioCheck(scenario.id, False, False, False, errors=[message])
    expected, errors, tool_errors = played.comparison, played.invalid, played.tool_errors
    reached = expected.value == 1.0
    notes: list[str] = list(played.coerced)
    if not expected.details.get("auth_success", True):
        mismatch = f"session mismatch: {expected.details.get('session_mismatch')}"
        (errors if settings.require_session else notes).append(mismatch)
    if wrong_path == "accepted":
        errors.append("the wrong path also reaches the expected state; add a wrong_script")
    if wrong_path == "unproven":
        errors.append(
            "no generated wrong path changes the final state: every slipped tool call was "
            "refused or changed nothing, so the check only shows that doing nothing fails; "
            "add a wrong_script"
        )
    conveyed = None
    if reached:
        conveyed, why = _conveyed(scenario, tools, trust, settings, arguments)
        if why:
            (errors if conveyed is False else notes).append(why)
    return ScenarioCheck(
        scenario=scenario.id,
        ok=reached and wrong_path not in ("accepted", "unproven") and not errors,
        expected_reached=reached,
        wrong_rejected=wrong_path == "rejected",
        diff=str(expected.details.get("diff_text", "")),
        wrong_diff=_wrong_reason(wrong.details) if wrong is not None else "",
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
    arguments: ToolArguments = STRICT,
) -> tuple[bool | None, str]:
    """(reached, why not) of the expected path played by the listening reference agent in a
    text-mode call with the scripted caller (no pauses, backchannels or barge-ins)."""
    if scenario.language not in ScriptedCaller.speaks:
        return None, f"call check not run: the scripted caller has no {scenario.language!r} lines"
    agent = ScriptedAgent(script="expected", listen=True)
    runtime = ToolRuntime(scenario, tools, trust, arguments)  # the suite's argument handling
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


def _wrong_reason(details: JSONReadObject) -> str:
    parts = []
    if not details.get("auth_success", True):
        parts.append(f"session mismatch: {details.get('session_mismatch')}")
    if details.get("diff_text"):
        parts.append(str(details["diff_text"]))
    return "\n".join(parts)
