"""The ``scripted`` system: plays a scenario's scripted path in a live call. Used to validate
scenarios, in regression tests and for engine benchmarks.

    systems:
      - {name: reference, type: scripted}                 # the expected path
      - {name: slip, type: scripted, script: wrong}       # one wrong tool argument

By default the agent listens (``listen: true``): a tool argument that is one of the caller's
facts (``user_goal.information_required``: member ID, date of birth, ...) is used only once
the caller has said it (``caller_facts``); until then the agent asks for it again, and gives
up after ``MAX_REASKS`` asks in a row that bring none of the missing facts; while the caller
stops mid-sentence ("my member ID is" and a pause; text mode) it says nothing and listens. In
audio mode it hears the caller through an ASR (option ``asr``; default the run's scoring ASR),
so the reference path proves that the simulated caller conveys what the scenario needs.
``listen: false`` plays the fixed arguments.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from voxeval.audio import Audio
from voxeval.benchmarks.eva.scenario import Scenario, ScriptStep
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.benchmarks.tools.database import is_record_table
from voxeval.config import SystemSpec
from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject
from voxeval.providers.base import ASR
from voxeval.providers.factory import system_component
from voxeval.systems.base import CALL, SYSTEMS, SystemBase, SystemContext
from voxeval.systems.call import AgentTurn, CallAgentBase
from voxeval.systems.caller_facts import CallerFacts
from voxeval.systems.llm_call import warm_asr
from voxeval.systems.options import ComponentSpec, parse_options
from voxeval.systems.turn_handling import TurnPolicy

ScriptChoice = Literal["expected", "wrong"]
_WRITE_VERBS = ("update", "cancel", "book", "create", "submit", "reschedule", "request", "make")
_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")
# asks in a row for facts the caller does not give (no fact heard between them) before the
# agent gives up
MAX_REASKS = 2
# the run's scoring ASR when none is configured (as ``protocols.live_call.scoring_asr``)
_DEFAULT_ASR = {"en": "whisper-tiny-en"}
# last words after which a speaker is not done (English and Spanish function words, fillers)
_OPEN_ENDS = frozenset(
    {
        *("is", "are", "was", "were", "my", "the", "a", "an", "and", "or", "of", "to", "on"),
        *("um", "uh", "er", "erm", "hmm", "see", "wait", "so", "s", "it", "its"),
        *("es", "son", "mi", "mis", "el", "la", "los", "las", "de", "y", "o", "que", "pues"),
        *("eh", "este"),
    }
)
_MULTILINGUAL_ASR = "whisper-base"


def mutate_arguments(arguments: JSONObject) -> JSONObject:
    """The built-in "wrong" path: the first date argument moves one day later, otherwise the
    first number grows by one, otherwise the first string gets a character changed — the kind
    of slip a mishearing agent makes."""
    return next(argument_mutations(arguments), dict(arguments))


def argument_mutations(arguments: JSONObject) -> Iterator[JSONObject]:
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
        assert isinstance(value, str)  # dates are strings (filtered above)
        m = _DATE.match(value)
        assert m is not None
        day = int(m.group(3)) % 28 + 1
        yield {**arguments, key: f"{m.group(1)}-{m.group(2)}-{day:02d}{value[10:]}"}
    for key in numbers:
        number = arguments[key]
        assert isinstance(number, int | float)  # filtered above
        yield {**arguments, key: number + 1}
    for key in texts:
        value = arguments[key]
        assert isinstance(value, str)  # filtered above
        yield {**arguments, key: value[:-1] + ("X" if value[-1] != "X" else "Y")}


def other_record_mutations(arguments: JSONObject, db: JSONObject) -> Iterator[JSONObject]:
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
    schemas: dict[str, JSONObject] | None = None,
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


def value_mutations(arguments: JSONObject, schema: JSONObject) -> Iterator[JSONObject]:
    """Slips that stay inside what the tool accepts: another value of an ``enum`` parameter
    (a wrong cancellation reason), and a number one lower (a smaller amount)."""
    properties = schema.get("properties") or {}
    for key, value in arguments.items():
        prop = properties.get(key) if isinstance(properties, dict) else None
        allowed = (prop if isinstance(prop, dict) else {}).get("enum") or []
        for other in allowed if isinstance(allowed, list) else []:
            if other != value:
                yield {**arguments, key: other}
    for key, value in arguments.items():
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 1:
            yield {**arguments, key: value - 1}


def _call_args(script: list[ScriptStep], target: tuple[int, int]) -> JSONObject:
    return script[target[0]].tool_calls[target[1]].arguments


class ScriptedAgent(CallAgentBase):
    """Plays ``scenario.agent_script`` one step per caller turn.

    If the scenario's agent has a ``greeting`` or the first step makes no tool calls and the
    caller has not spoken yet, ``start`` returns the greeting (``greeting`` else step 0).
    Each step's tool calls run through the ToolRuntime before its ``say`` text is returned.
    When the script is exhausted the agent says goodbye and ends the call.

    ``listen``: a step whose tool calls need a caller fact not yet heard is held back; the
    agent asks for the fact (by its label) instead, and after ``MAX_REASKS`` asks in a row
    that bring no new fact it apologises and ends the call. ``asr(language)`` gives the ASR
    that hears the caller in audio mode."""

    name = "scripted"

    def __init__(
        self,
        script: ScriptChoice = "expected",
        greet: bool = True,
        turn_policy: TurnPolicy | None = None,
        listen: bool = True,
        asr: Callable[[str], ASR] | None = None,
    ) -> None:
        if script not in ("expected", "wrong"):
            raise ConfigError(
                f"agent scripted: script: expected 'expected' or 'wrong', got {script!r}"
            )
        self.script = script
        self.greet = greet
        self.turn_policy = turn_policy  # None: the run's turn handling
        self.listen = listen
        self._asr_factory = asr
        self._asr: ASR | None = None
        self._steps: list[ScriptStep] = []
        self._next = 0
        self._tools: ToolRuntime | None = None
        self._scenario: Scenario | None = None
        self._facts: CallerFacts | None = None
        self._reasks = 0
        self._missing = 0
        self._new_facts: list[tuple[str, str]] = []  # facts first heard in the last turn

    def start(self, scenario: Scenario, tools: ToolRuntime) -> AgentTurn | None:
        self._tools = tools
        self._scenario = scenario
        self._facts = CallerFacts(scenario.user_goal.information_required)
        self._reasks = 0
        self._missing = 0  # facts missing at the last ask
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
        heard = user_text
        if self.listen and user_audio is not None and user_text is None:
            heard = self._transcribe(user_audio)
        before = self._facts.heard_labels() if self._facts is not None else set()
        if self._facts is not None and heard:
            self._facts.hear(heard)
        self._new_facts = [] if self._facts is None else self._facts.new_since(before)
        # words, not a transcript: ASR punctuation ("...") says nothing about an unfinished turn
        typed = user_text is not None
        if self.listen and typed and heard and sounds_unfinished(heard) and self._held():
            # "my member ID is" and a pause: a listener waits for the rest, says nothing
            return AgentTurn(text=None, heard=heard)
        turn = self._play()
        if heard is not None:
            return AgentTurn(
                text=turn.text, tool_calls=turn.tool_calls, end_call=turn.end_call, heard=heard
            )
        return turn

    def warm(self, language: str = "en") -> None:
        """Load the ASR before the call and run it once on silence (as the cascade does)."""
        if self._asr is None and self._asr_factory is not None:
            self._asr = warm_asr(self._asr_factory(language))

    def _transcribe(self, audio: Audio) -> str:
        assert self._scenario is not None
        if self._asr is None:
            if self._asr_factory is None:
                raise ConfigError(
                    "agent scripted: listening to audio needs an ASR ('asr', or listen: false)"
                )
            self._asr = self._asr_factory(self._scenario.language)
        return str(self._asr.transcribe(audio, language=self._scenario.language).text)

    @property
    def finished(self) -> bool:
        return self._next >= len(self._steps)

    def _play(self) -> AgentTurn:
        if self._tools is None:
            raise RuntimeError("ScriptedAgent.respond called before start")
        if self._next >= len(self._steps):
            return AgentTurn(text="Thank you for calling. Goodbye.", end_call=True)
        step = self._steps[self._next]
        if self.listen and self._facts is not None:
            missing = self._facts.unheard([c.arguments for c in step.tool_calls])
            if missing:
                return self._ask_again(missing)
        self._next += 1
        self._reasks = 0
        records = tuple(self._tools.call(c.name, c.arguments) for c in step.tool_calls)
        return AgentTurn(text=step.say or None, tool_calls=records, end_call=step.end_call)

    def _held(self) -> bool:
        """Whether the next step waits for facts the caller has not given."""
        if self._facts is None or self._next >= len(self._steps):
            return False
        step = self._steps[self._next]
        return bool(self._facts.unheard([c.arguments for c in step.tool_calls]))

    def _language(self) -> str:
        """The scenario's base language code (its lines are spoken in it)."""
        language = self._scenario.language if self._scenario is not None else "en"
        return (language or "en").split("-")[0].lower()

    def _ask_again(self, labels: list[str]) -> AgentTurn:
        """Ask for facts the next step needs and the caller has not said (labels as in the
        scenario, so that a caller matching field names hears the question)."""
        joiner = " y " if self._language() == "es" else " and "
        wanted = joiner.join(label.replace("_", " ") for label in labels)
        # read back what it did hear (a caller cutting in with its ID hears it was taken up)
        lines = _ASK_LINES.get(self._language(), _ASK_LINES["en"])
        got = " ".join(
            lines["got"].format(label=label.replace("_", " "), value=value)
            for label, value in self._new_facts
        )
        if len(labels) < self._missing:  # the caller gave something since: not ignored
            self._reasks = 0
        self._missing = len(labels)
        self._reasks += 1
        if self._reasks > MAX_REASKS:
            return AgentTurn(text=lines["give_up"].format(wanted=wanted), end_call=True)
        ask = lines["ask"].format(wanted=wanted)
        return AgentTurn(text=f"{got} {ask}".strip())


# What the listening agent says when a fact is missing, in the scenario's language (English for
# a language without its own lines); the labels stay as the scenario names them.
_ASK_LINES: dict[str, dict[str, str]] = {
    "en": {
        "got": "Thanks, I have your {label} as {value}.",
        "ask": "Sorry, I still need your {wanted}. What is your {wanted}?",
        "give_up": "I'm sorry, I can't go on without your {wanted}. Goodbye.",
    },
    "es": {
        "got": "Gracias, tengo su {label}: {value}.",
        "ask": "Perdone, todavía necesito su {wanted}. ¿Cuál es su {wanted}?",
        "give_up": "Lo siento, no puedo seguir sin su {wanted}. Adiós.",
    },
}


def sounds_unfinished(text: str) -> bool:
    """Whether ``text`` stops mid-sentence: on a comma, colon or "...", or on a word that
    cannot end a statement ("my member ID is", "uh, hold on")."""
    stripped = text.strip()
    if stripped.endswith((",", ":", "...", "…", "-")):
        return True
    words = re.findall(r"[^\W_]+", stripped.lower())
    return bool(words) and not stripped.endswith((".", "?", "!")) and words[-1] in _OPEN_ENDS


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
    listen: bool = True  # take the caller's facts from what it said (False: fixed arguments)
    asr: ComponentSpec | None = None  # how it hears the caller (None: the run's scoring ASR)


@SYSTEMS.register("scripted")
class ScriptedSystem(SystemBase):
    """Holds live calls only: each call gets a fresh ``ScriptedAgent`` (``agent_class``)."""

    capabilities = frozenset({CALL})
    agent_class: ClassVar[type[ScriptedAgent]] = ScriptedAgent

    def __init__(
        self, name: str, options: ScriptedOptions, ctx: SystemContext | None = None
    ) -> None:
        self.name = name
        self.options = options
        self._ctx = ctx  # the run's providers (a model loads once) and config; None from Python

    @classmethod
    def from_spec(cls, spec: SystemSpec, ctx: SystemContext | None = None) -> ScriptedSystem:
        return cls(spec.name, parse_options(spec, ScriptedOptions), ctx)

    def _asr(self, language: str) -> ASR:
        """The ASR that hears the caller: ``asr`` if set, else the run's scoring ASR (``asr:``
        of the run config), else Whisper tiny.en for English and Whisper base otherwise."""
        spec: Any = self.options.asr
        if spec is None:
            spec = self._ctx.config.asr if self._ctx is not None else None
        if spec is None:
            spec = _DEFAULT_ASR.get(language.split("-")[0].lower(), _MULTILINGUAL_ASR)
        return system_component(self._ctx, "asr", spec)

    def identity(self) -> JSONObject:
        ident: dict[str, Any] = {
            "type": "scripted",
            "script": self.options.script,
            "greet": self.options.greet,
        }
        if self.options.turn is not None:
            ident["turn"] = self.options.turn.model_dump()
        # listening changed what the same script does: a run stored before it is not resumed
        ident["listen"] = self.options.listen
        if self.options.listen and self.options.asr is not None:
            ident["asr"] = self.options.asr.model_dump(mode="json")
        return ident

    def open_call(self) -> ScriptedAgent:
        o = self.options
        agent = self.agent_class(
            script=o.script, greet=o.greet, turn_policy=o.turn, listen=o.listen, asr=self._asr
        )
        simulation = self._ctx.config.simulation if self._ctx is not None else None
        if o.listen and simulation is not None and simulation.get("mode", "audio") == "audio":
            agent.warm(str(simulation.get("language", "en")))  # not the agent's latency
        return agent
