"""The reference agent listens: it uses a caller fact in a tool call only once the caller said
it, so a caller that withholds its member ID (a decision-tree rule "Never give your member
ID") makes it fail, and `scenarios validate` fails such a scenario."""

from __future__ import annotations

from typing import Any

import pytest

from voxeval.benchmarks.eva.clinic_calls import CLINIC_CALLS_PATH
from voxeval.benchmarks.eva.scenario import Scenario, ScenarioSuite, load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.protocols.scenario_validation import validate_scenario
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.task_completion import task_completion
from voxeval.simulation.callers.scripted_caller import ScriptedCaller
from voxeval.simulation.engine import run_call
from voxeval.systems.caller_facts import CallerFacts
from voxeval.systems.scripted import MAX_REASKS, ScriptedAgent, sounds_unfinished

SCENARIO = "clinic-s09-refill"


@pytest.fixture(scope="module")
def suite() -> ScenarioSuite:
    return load_scenario_suite(CLINIC_CALLS_PATH)


WITHHOLD_RULE = "Never give your member ID, even when asked."


def withholding(scenario: Scenario) -> Scenario:
    """``scenario`` whose caller keeps its member ID back (everything else unchanged)."""
    goal = scenario.user_goal.model_copy(deep=True)
    goal.decision_tree.edge_cases.append(WITHHOLD_RULE)
    return scenario.model_copy(update={"user_goal": goal})


def call(suite: ScenarioSuite, agent: ScriptedAgent, withhold: bool = False) -> tuple[float, Any]:
    scenario = suite.get(SCENARIO)
    scenario = withholding(scenario) if withhold else scenario
    caller = ScriptedCaller(behaviour_kind="none")
    tools = ToolRuntime(scenario, suite.tools)
    result = run_call(scenario, caller, agent, tools, mode="text", seed=0)
    record = LiveCallRecord(
        timeline=result.timeline,
        final_db=result.final_db,
        expected_db=scenario.expected_db,
        task_completion=suite.task_completion,
    )
    value = task_completion(record).value
    assert value is not None
    return value, result


def test_reference_agent_fails_when_the_caller_withholds_its_id(suite: ScenarioSuite) -> None:
    value, result = call(suite, ScriptedAgent(), withhold=True)
    assert value == 0.0
    said = [s.intended_text for s in result.timeline.speech("assistant")]
    asks = [t for t in said if "still need your member ID" in t]
    assert len(asks) == MAX_REASKS
    assert said[-1] == "I'm sorry, I can't go on without your member ID. Goodbye."
    assert result.end_reason == "agent_end_call"
    assert [t.name for t in result.timeline.tools] == []  # never verified anyone


def test_fixed_arguments_would_pass_the_same_call(suite: ScenarioSuite) -> None:
    # fixed arguments (the old agent, listen: false) complete the task without the ID
    value, result = call(suite, ScriptedAgent(listen=False), withhold=True)
    assert value == 1.0
    said = " ".join(s.intended_text for s in result.timeline.speech("user"))
    assert "I'd rather not give you my member ID." in said and "FY2-9K3M" not in said


def test_reference_agent_completes_with_a_caller_that_gives_everything(
    suite: ScenarioSuite,
) -> None:
    value, result = call(suite, ScriptedAgent())
    assert value == 1.0
    verify = result.timeline.tools[0]
    assert verify.name == "verify_patient" and verify.arguments["member_id"] == "FY2-9K3M"


def test_a_fact_is_heard_in_its_spoken_forms() -> None:
    facts = CallerFacts(
        {"member ID": "FY2-9K3M", "date of birth": "1988-03-03", "last name": "Okonkwo-Price"}
    )
    needed = {"member_id": "FY2-9K3M", "date_of_birth": "1988-03-03", "last_name": "Okonkwo-Price"}
    assert facts.unheard([needed]) == ["member ID", "date of birth", "last name"]
    facts.hear("It's F Y two, nine K three M.")
    assert facts.unheard([needed]) == ["date of birth", "last name"]
    facts.hear("I was born on March 3rd, 1988, and my name is Okonkwo Prize.")
    # the date in words; the name approximately (a mishearing of one letter)
    assert facts.unheard([needed]) == []
    # a code is never heard approximately
    other = CallerFacts({"member ID": "FY2-9K3M"})
    other.hear("F Y 2 9 K 3 N")
    assert other.unheard([{"member_id": "FY2-9K3M"}]) == ["member ID"]
    # caller facts are found nested too; other arguments need nothing from the caller
    call = {"rx_number": "RX-100", "nested": {"id": "FY2-9K3M"}, "kind": "refill"}
    assert facts.needed_by(call) == ["member ID"]


def test_scenarios_validate_fails_a_scenario_whose_caller_cannot_give_the_id(
    suite: ScenarioSuite,
) -> None:
    scenario = suite.get(SCENARIO)
    good = validate_scenario(scenario, suite.tools_for(scenario), suite.trust)
    assert good.ok and good.conveyed is True
    broken = withholding(scenario)
    check = validate_scenario(broken, suite.tools_for(broken), suite.trust)
    assert check.expected_reached  # the fixed path still works on the tools ...
    assert check.conveyed is False and not check.ok  # ... but no caller could convey it
    assert any("listening reference agent" in e for e in check.errors)


def test_agent_waits_for_the_rest_of_an_unfinished_answer(suite: ScenarioSuite) -> None:
    scenario = suite.get(SCENARIO)
    agent = ScriptedAgent()
    agent.start(scenario, ToolRuntime(scenario, suite.tools))
    assert agent.respond(None, "Hi, I need a refill.").text  # step 0: asks for the ID
    # a pause before the number: the agent says nothing and keeps listening
    assert sounds_unfinished("Um, sure, my member ID is") and sounds_unfinished("Uh, hold on")
    assert not sounds_unfinished("My member ID is FY2-9K3M.")
    held = agent.respond(None, "Um, sure, my member ID is")
    assert held.text is None and not held.tool_calls and held.heard
    done = agent.respond(
        None, "FY2-9K3M, my date of birth is 1988-03-03 and my last name is Okonkwo-Price."
    )
    assert [r.name for r in done.tool_calls] == ["verify_patient"]
