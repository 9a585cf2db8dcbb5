"""The ``scripted`` system: plays a scenario's scripted path in a live call (no models). Used to
validate scenarios, in regression tests and for engine benchmarks.

    systems:
      - {name: reference, type: scripted}                 # the expected path
      - {name: slip, type: scripted, script: wrong}       # one wrong tool argument
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from voxeval.audio import Audio
from voxeval.benchmarks.scenario import Scenario, ScriptStep
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.benchmarks.tools.database import is_record_table
from voxeval.config import SystemSpec
from voxeval.errors import ConfigError
from voxeval.registry import register
from voxeval.systems.base import CALL
from voxeval.systems.call import AgentTurn
from voxeval.systems.options import parse_options
from voxeval.systems.turn_handling import TurnPolicy

ScriptChoice = Literal["expected", "wrong"]
_WRITE_VERBS = ("update", "cancel", "book", "create", "submit", "reschedule", "request", "make")
_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")


def mutate_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """The built-in "wrong" path: the first date argument moves one day later, otherwise the
    first number grows by one, otherwise the first string gets a character changed — the kind
    of slip a mishearing agent makes."""
    return next(argument_mutations(arguments), dict(arguments))


def argument_mutations(arguments: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every one-argument slip of ``mutate_arguments``'s kinds, in its order of preference:
    each date one day later, then each number plus one, then each string with its last
    character changed. The first is ``mutate_arguments``'s."""
    dates = [k for k, v in arguments.items() if isinstance(v, str) and _DATE.match(v)]
    numbers = [
        k for k, v in arguments.items() if isinstance(v, int | float) and not isinstance(v, bool)
    ]
    texts = [k for k, v in arguments.items() if isinstance(v, str) and v and k not in dates]
    for key in dates:
        value = arguments[key]
        m = _DATE.match(value)
        assert m is not None
        day = int(m.group(3)) % 28 + 1
        yield {**arguments, key: f"{m.group(1)}-{m.group(2)}-{day:02d}{value[10:]}"}
    for key in numbers:
        yield {**arguments, key: arguments[key] + 1}
    for key in texts:
        value = arguments[key]
        yield {**arguments, key: value[:-1] + ("X" if value[-1] != "X" else "Y")}


def other_record_mutations(
    arguments: dict[str, Any], db: dict[str, Any]
) -> Iterator[dict[str, Any]]:
    """Slips to another existing record: each string argument naming a record of a table in
    ``db`` (its key, any case) replaced by each other key of that table, nearest after it
    first, as an agent that picks the wrong slot or appointment would. Such a slip passes the
    tools' existence checks."""
    for key, value in arguments.items():
        if not isinstance(value, str):
            continue
        for table in db.values():
            if not is_record_table(table):
                continue
            keys = sorted(str(k) for k in table)
            match = [k for k in keys if k.lower() == value.lower()]
            if match:
                at = keys.index(match[0])
                for other in keys[at + 1 :] + keys[:at]:
                    yield {**arguments, key: other}
                break


def wrong_steps(scenario: Scenario, write_tools: set[str] | None = None) -> list[ScriptStep]:
    """The scenario's ``wrong_script``, or the expected path with the arguments of its last
    write tool call (``write_tools``; else a call whose name looks like a write; else the last
    call) mutated by ``mutate_arguments``."""
    if scenario.wrong_script:
        return list(scenario.wrong_script)
    first = next(wrong_candidates(scenario, write_tools), None)
    return first[0] if first else [s.model_copy(deep=True) for s in scenario.agent_script]


def wrong_candidates(
    scenario: Scenario,
    write_tools: set[str] | None = None,
    schemas: dict[str, dict[str, Any]] | None = None,
) -> Iterator[tuple[list[ScriptStep], tuple[int, int]]]:
    """Generated wrong paths, most plausible first, each with the (step, call) it changed:
    the expected path with one argument of one call slipped (``argument_mutations``), write
    calls from the last to the first (``write_tools``; else calls whose names look like
    writes; else only the last call), then slips to another existing record
    (``other_record_mutations``), to another allowed value of an ``enum`` parameter
    (``schemas``: tool name -> JSON schema of its parameters) or a number one lower. The
    first is ``wrong_steps``'s."""
    script = scenario.agent_script
    calls = [(s, c) for s, step in enumerate(script) for c in range(len(step.tool_calls))]

    def is_write(name: str) -> bool:
        return name in write_tools if write_tools is not None else name.startswith(_WRITE_VERBS)

    targets = [(s, c) for s, c in reversed(calls) if is_write(script[s].tool_calls[c].name)]
    chosen = targets or calls[-1:]
    slips = [
        *((t, a) for t in chosen for a in argument_mutations(_call_args(script, t))),
        *(
            (t, a)
            for t in chosen
            for a in other_record_mutations(_call_args(script, t), scenario.initial_db)
        ),
        *(
            (t, a)
            for t in chosen
            for a in value_mutations(
                _call_args(script, t),
                (schemas or {}).get(script[t[0]].tool_calls[t[1]].name, {}),
            )
        ),
    ]
    for (s, c), arguments in slips:
        steps = [step.model_copy(deep=True) for step in script]
        call = steps[s].tool_calls[c]
        steps[s].tool_calls[c] = call.model_copy(update={"arguments": arguments})
        yield steps, (s, c)


def value_mutations(arguments: dict[str, Any], schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Slips that stay inside what the tool accepts: another value of an ``enum`` parameter
    (a wrong cancellation reason), and a number one lower (a smaller amount)."""
    properties = schema.get("properties") or {}
    for key, value in arguments.items():
        allowed = (properties.get(key) or {}).get("enum") or []
        for other in allowed:
            if other != value:
                yield {**arguments, key: other}
    for key, value in arguments.items():
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 1:
            yield {**arguments, key: value - 1}


def _call_args(script: list[ScriptStep], target: tuple[int, int]) -> dict[str, Any]:
    return script[target[0]].tool_calls[target[1]].arguments


class ScriptedAgent:
    """Plays ``scenario.agent_script`` one step per caller turn.

    If the scenario's agent has a ``greeting`` or the first step makes no tool calls and the
    caller has not spoken yet, ``start`` returns the greeting (``greeting`` else step 0).
    Each step's tool calls run through the ToolRuntime before its ``say`` text is returned.
    When the script is exhausted the agent says goodbye and ends the call."""

    name = "scripted"

    def __init__(
        self,
        script: ScriptChoice = "expected",
        greet: bool = True,
        turn_policy: TurnPolicy | None = None,
    ) -> None:
        if script not in ("expected", "wrong"):
            raise ConfigError(
                f"agent scripted: script: expected 'expected' or 'wrong', got {script!r}"
            )
        self.script = script
        self.greet = greet
        self.turn_policy = turn_policy  # None: the run's turn handling
        self._steps: list[ScriptStep] = []
        self._next = 0
        self._tools: ToolRuntime | None = None

    def start(self, scenario: Scenario, tools: ToolRuntime) -> AgentTurn | None:
        self._tools = tools
        self._steps = (
            wrong_steps(scenario) if self.script == "wrong" else list(scenario.agent_script)
        )
        self._next = 0
        if not self.greet:
            return None
        if scenario.agent.greeting:
            return AgentTurn(text=scenario.agent.greeting)
        if self._steps and not self._steps[0].tool_calls and not self._steps[0].end_call:
            return self._play()
        return None

    def respond(self, user_audio: Audio | None, user_text: str | None) -> AgentTurn:
        turn = self._play()
        if user_text is not None:
            return AgentTurn(
                text=turn.text, tool_calls=turn.tool_calls, end_call=turn.end_call, heard=user_text
            )
        return turn

    @property
    def finished(self) -> bool:
        return self._next >= len(self._steps)

    def _play(self) -> AgentTurn:
        if self._tools is None:
            raise RuntimeError("ScriptedAgent.respond called before start")
        if self._next >= len(self._steps):
            return AgentTurn(text="Thank you for calling. Goodbye.", end_call=True)
        step = self._steps[self._next]
        self._next += 1
        records = tuple(self._tools.call(c.name, c.arguments) for c in step.tool_calls)
        return AgentTurn(text=step.say or None, tool_calls=records, end_call=step.end_call)


def play_script(steps: list[ScriptStep], tools: ToolRuntime) -> list[AgentTurn]:
    """Run every step's tool calls directly (no call, no audio) — scenario validation."""
    turns = []
    for step in steps:
        records = tuple(tools.call(c.name, c.arguments) for c in step.tool_calls)
        turns.append(AgentTurn(text=step.say or None, tool_calls=records, end_call=step.end_call))
    return turns


class ScriptedOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    script: ScriptChoice = "expected"  # or "wrong": the expected path with one slip
    greet: bool = True
    turn: TurnPolicy | None = None  # turn handling in calls (None: the run's)


@register("system", "scripted")
class ScriptedSystem:
    """Holds live calls only: each call gets a fresh ``ScriptedAgent`` (``agent_class``)."""

    capabilities = frozenset({CALL})
    agent_class: ClassVar[type[ScriptedAgent]] = ScriptedAgent

    def __init__(self, name: str, options: ScriptedOptions) -> None:
        self.name = name
        self.options = options

    @classmethod
    def from_spec(cls, spec: SystemSpec, ctx: Any = None) -> ScriptedSystem:
        return cls(spec.name, parse_options(spec, ScriptedOptions))

    def identity(self) -> dict[str, Any]:
        ident: dict[str, Any] = {
            "type": "scripted",
            "script": self.options.script,
            "greet": self.options.greet,
        }
        if self.options.turn is not None:
            ident["turn"] = self.options.turn.model_dump()
        return ident

    def open_call(self) -> ScriptedAgent:
        o = self.options
        return self.agent_class(script=o.script, greet=o.greet, turn_policy=o.turn)
