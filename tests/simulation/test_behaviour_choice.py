"""``simulation.behaviour``: which behaviour each caller gets, seeded with the call's seed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.simulation.helpers import write_suite
from tests.simulation.parties import ListCaller
from voxeval.benchmarks.eva.scenario import Scenario, load_scenario_suite
from voxeval.errors import ConfigError
from voxeval.simulation.behaviour_choice import behaviour_record, build_behaviour, resolve_kind
from voxeval.simulation.caller_behaviour import ListeningPlan, ScheduledBehaviour
from voxeval.simulation.llm_behaviour import LLMBehaviour
from voxeval.simulation.personas import BACKCHANNELS, get_persona
from voxeval.simulation.perturbations import Condition, PersonaPerturbation
from voxeval.simulation.rule_behaviour import RuleBehaviour
from voxeval.simulation.simulation_config import parse_simulation

LLM_SPEC = {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}
ELDERLY = Condition("persona-elderly_slow", (PersonaPerturbation("elderly_slow"),))


def test_auto_gives_the_scripted_caller_seeded_rules_with_the_condition_persona() -> None:
    sim = parse_simulation({"mode": "text"})
    assert sim.behaviour == "auto"
    caller = sim.build_caller(None, ELDERLY, seed=1234)
    behaviour = caller.behaviour
    assert isinstance(getattr(behaviour, "inner", behaviour), RuleBehaviour)  # correcting wrap
    assert behaviour.seed == 1234 and behaviour.persona.name == "elderly_slow"
    again = sim.build_caller(None, ELDERLY, seed=1234).behaviour
    plans = [behaviour.listening_plan("x", 12.0) for _ in range(10)]
    assert plans == [again.listening_plan("x", 12.0) for _ in range(10)]


def test_auto_gives_the_llm_caller_the_llm_behaviour_and_rules_on_request() -> None:
    sim = parse_simulation({"mode": "text", "caller": "llm", "caller_llm": LLM_SPEC})
    behaviour = sim.build_caller(None, None, seed=9).behaviour
    assert isinstance(behaviour, LLMBehaviour) and behaviour.seed == 9
    assert isinstance(behaviour.rules, RuleBehaviour) and behaviour.rules.seed == 9
    rules = parse_simulation(
        {"mode": "text", "caller": "llm", "caller_llm": LLM_SPEC, "behaviour": "rules"}
    )
    built = rules.build_caller(None, None, 9).behaviour
    assert isinstance(getattr(built, "inner", built), RuleBehaviour)


def test_none_keeps_only_the_marked_pauses() -> None:
    sim = parse_simulation({"mode": "text", "behaviour": "none"})
    behaviour = sim.build_caller(None, ELDERLY, seed=1).behaviour
    assert behaviour == ScheduledBehaviour(pause_s=get_persona("elderly_slow").pause_median_s)
    assert behaviour.listening_plan("x", 30.0) == ListeningPlan()
    assert behaviour.speaking_plan("Well... yes, KX4.").pauses_s == (1.1,)


def test_a_behaviour_the_caller_cannot_use_is_a_config_error_naming_the_field() -> None:
    with pytest.raises(ConfigError, match=r"simulation\.behaviour: the 'scripted' caller"):
        parse_simulation({"behaviour": "llm"})
    with pytest.raises(ConfigError, match="behaviour: Input should be 'auto'"):
        parse_simulation({"behaviour": "sometimes"})
    with pytest.raises(ConfigError, match="needs the caller's LLM"):
        build_behaviour("llm", persona=get_persona(None), language="en", seed=0)
    assert resolve_kind("auto", ("rules", "none"), "x") == "rules"
    assert resolve_kind("none", ("llm",), "x") == "none"


def test_the_scripted_caller_backchannels_in_the_scenario_language(tmp_path: Path) -> None:
    suite = load_scenario_suite(write_suite(tmp_path / "suite"))
    spanish = Scenario.model_validate({**suite.scenarios[0].model_dump(), "language": "es"})
    caller = parse_simulation({"mode": "text"}).build_caller(None, ELDERLY, seed=3)
    caller.start(spanish)
    behaviour = caller.behaviour
    said = {b.text for _ in range(40) for b in behaviour.listening_plan("x", 15.0).backchannels}
    assert said and said <= set(BACKCHANNELS["es"])


def test_call_json_keeps_the_kind_and_the_llm_behaviour_counts() -> None:
    sim = parse_simulation({"mode": "text", "caller": "llm", "caller_llm": LLM_SPEC})
    caller = sim.build_caller(None, None, seed=9)
    caller.behaviour.stats.fallbacks = 2
    assert behaviour_record(caller) == {
        "kind": "llm", "decisions": 0, "skipped": 0, "llm_calls": 0, "parse_failures": 0,
        "fallbacks": 2,
    }  # fmt: skip
    scripted = parse_simulation({"mode": "text"}).build_caller(None, None, seed=1)
    assert behaviour_record(scripted) == {"kind": "rules"}
    plain = ListCaller("hello", [])
    plain.behaviour = None  # a caller without a behaviour of its own
    assert behaviour_record(plain) is None
