"""The caller contract (``simulation.parties``): every optional member is declared on
``Caller`` with its default in ``CallerBase``; the engine, the run config and the plan check
read the declared member, so a plugin caller's override is used and a plain one gets the
defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.simulation.helpers import scenario, write_suite
from tests.simulation.parties import ListAgent, ListCaller, NoTools
from voxeval.audio import Audio
from voxeval.benchmarks.eva.scenario import Scenario
from voxeval.config import load_run_config
from voxeval.errors import ConfigError
from voxeval.runner.plan_check import validate_plan
from voxeval.simulation.behaviour_choice import behaviour_record
from voxeval.simulation.caller_behaviour import ScheduledBehaviour
from voxeval.simulation.callers import LLMCaller, ScriptedCaller
from voxeval.simulation.engine import EngineSettings, run_call
from voxeval.simulation.latency import ComponentLatency, LatencyModel
from voxeval.simulation.parties import CALLERS, Caller, CallerBase, CallerTurn
from voxeval.simulation.personas import get_persona
from voxeval.simulation.rule_behaviour import RuleBehaviour
from voxeval.simulation.simulation_config import parse_simulation

FIXED = LatencyModel(agent=ComponentLatency(kind="fixed", ms=800))
LLM_SPEC = {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}


class PlainCaller(CallerBase):
    """Only the required members: everything else is the base's default."""

    name = "plain"

    def start(self, scenario: Scenario) -> CallerTurn:
        return CallerTurn("hello")

    def respond(self, agent_audio: Audio | None, agent_text: str | None) -> CallerTurn:
        return CallerTurn(f"you said {agent_text}", end_call=True)


@CALLERS.register("contract-test-french")
class FrenchLLMCaller(PlainCaller):
    """A plugin caller overriding the class-level members."""

    name = "contract-test-french"
    needs_llm = True
    speaks = ("fr",)
    behaviour_kinds = ("rules", "none")

    def __init__(self, **options: Any) -> None:
        self.options = options
        self.behaviour_kind = str(options["behaviour_kind"])


def test_a_plain_caller_gets_every_default() -> None:
    caller = PlainCaller()
    assert isinstance(caller, Caller)
    assert caller.needs_llm is False
    assert caller.speaks is None
    assert caller.behaviour_kinds is None
    assert caller.behaviour is None and caller.behaviour_kind is None
    assert caller.persona is None
    assert caller.speech_rate == 1.0
    # cutting in, it says its usual answer
    assert caller.interrupt(None, "so far") == CallerTurn("you said so far", end_call=True)
    assert behaviour_record(caller) is None


def test_a_caller_class_must_define_start_and_respond() -> None:
    class Mute(CallerBase):
        name = "mute"

        def start(self, scenario: Scenario) -> CallerTurn:
            return CallerTurn("hi")

    with pytest.raises(TypeError, match="respond"):
        Mute()  # type: ignore[abstract]


def test_the_builtin_callers_declare_their_overrides() -> None:
    assert (ScriptedCaller.needs_llm, ScriptedCaller.speaks) == (False, ("en", "es"))
    assert ScriptedCaller.behaviour_kinds == ("rules", "none")
    assert (LLMCaller.needs_llm, LLMCaller.speaks) == (True, None)
    assert LLMCaller.behaviour_kinds == ("llm", "rules", "none")
    scripted = ScriptedCaller(persona="elderly_slow", seed=4)
    assert scripted.persona == get_persona("elderly_slow")
    assert scripted.speech_rate == get_persona("elderly_slow").speech_rate
    assert scripted.behaviour_kind == "rules"


def test_the_run_config_reads_the_plugin_callers_class_members() -> None:
    sim = parse_simulation({"mode": "text", "caller": "contract-test-french"})
    with pytest.raises(ConfigError, match="caller 'contract-test-french' needs an LLM"):
        sim.build_caller(None, None, seed=5)
    sim = parse_simulation(
        {"mode": "text", "caller": "contract-test-french", "caller_llm": LLM_SPEC}
    )
    caller = sim.build_caller(None, None, seed=5)
    assert isinstance(caller, FrenchLLMCaller)
    # needs_llm: it gets the LLM, the seed and the temperature; behaviour_kinds: its default
    assert {k: caller.options[k] for k in ("seed", "temperature", "behaviour_kind")} == {
        "seed": 5,
        "temperature": 0.0,
        "behaviour_kind": "rules",
    }
    assert "llm" in caller.options
    with pytest.raises(ConfigError, match="supports rules, none, not 'llm'"):
        parse_simulation({"mode": "text", "caller": "contract-test-french", "behaviour": "llm"})


def test_the_plan_check_reads_the_plugin_callers_languages_and_llm(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "calls", [scenario("book-1")])
    config = {
        "suite": str(suite),
        "systems": [{"name": "good", "type": "scripted"}],
        "simulation": {"caller": "contract-test-french", "mode": "text"},
    }
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(ConfigError) as refused:
        validate_plan(load_run_config(path))
    message = str(refused.value)
    assert "simulation.caller_llm: caller 'contract-test-french' needs an LLM" in message
    assert "the 'contract-test-french' caller speaks fr, not 'en'" in message


class CorrectingCaller(ListCaller):
    """Cutting in, it says a correction instead of its next line."""

    def interrupt(self, agent_audio: Audio | None, agent_text: str | None) -> CallerTurn:
        return CallerTurn("sorry, the date is the fifth")


def _barge_in_call(caller: ListCaller) -> list[str]:
    caller.behaviour = ScheduledBehaviour(barge_in_at_s=1.0)
    agent = ListAgent(["a b c d e f g h", "ok"])
    result = run_call(
        None,  # type: ignore[arg-type]
        caller,
        agent,
        NoTools(),  # type: ignore[arg-type]
        mode="text",
        latency_model=FIXED,
        settings=EngineSettings(frame_ms=10),
    )
    return [s.intended_text for s in result.timeline.speech("user") if not s.backchannel]


def test_the_engine_asks_interrupt_at_a_barge_in_and_respond_otherwise() -> None:
    lines = ["no no stop that is not what i asked", "bye"]
    assert _barge_in_call(ListCaller("i need help", list(lines)))[:2] == [
        "i need help",
        "no no stop that is not what i asked",  # the base's interrupt: its usual answer
    ]
    assert _barge_in_call(CorrectingCaller("i need help", list(lines)))[:2] == [
        "i need help",
        "sorry, the date is the fifth",
    ]


def _opening_length(speech_rate: float | None) -> float:
    caller = ListCaller("one two three four five", [])
    if speech_rate is not None:
        caller.speech_rate = speech_rate
    result = run_call(
        None,  # type: ignore[arg-type]
        caller,
        ListAgent([], greeting=None),
        NoTools(),  # type: ignore[arg-type]
        mode="text",
        latency_model=FIXED,
    )
    first = result.timeline.speech("user")[0]
    return round(first.end - first.start, 2)


def test_the_engine_speaks_at_the_callers_speech_rate() -> None:
    # text mode: 2.5 words per second at rate 1.0, five words
    assert _opening_length(None) == 2.0
    assert _opening_length(2.0) == 1.0


def test_call_json_names_the_behaviour_class_when_the_caller_names_no_kind() -> None:
    caller = ListCaller("hello", [])
    assert behaviour_record(caller) == {"kind": "ScheduledBehaviour"}
    caller.behaviour = RuleBehaviour(get_persona(None), "en", 1)
    caller.behaviour_kind = "rules"
    assert behaviour_record(caller) == {"kind": "rules"}
