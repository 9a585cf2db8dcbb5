"""The scripted agent plays a scenario's expected path (or a wrong one) through the tools."""

from __future__ import annotations

import pytest

from voxeval.benchmarks.eva.clinic_calls import CLINIC_CALLS_PATH
from voxeval.benchmarks.eva.scenario import ScenarioSuite, load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.errors import ConfigError
from voxeval.registry import lookup
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.task_completion import task_completion
from voxeval.systems.call import CallAgent
from voxeval.systems.scripted import ScriptedAgent, ScriptedOptions, mutate_arguments, wrong_steps


@pytest.fixture(scope="module")
def suite() -> ScenarioSuite:
    return load_scenario_suite(CLINIC_CALLS_PATH)


def run(suite: ScenarioSuite, scenario_id: str, script: str) -> tuple[ToolRuntime, list[str]]:
    scenario = suite.get(scenario_id)
    tools = ToolRuntime(scenario, suite.tools)
    # fixed arguments: these tests are about the script, not about listening
    options = ScriptedOptions(script=script, listen=False)
    agent = lookup("system", "scripted")("scripted", options).open_call()
    assert isinstance(agent, CallAgent)
    said = []
    greeting = agent.start(scenario, tools)
    assert greeting is not None and greeting.text == scenario.agent.greeting
    for _ in range(20):
        turn = agent.respond(None, "caller words")
        said.append(turn.text or "")
        assert turn.heard == "caller words"
        if turn.end_call:
            break
    return tools, said


def test_expected_path_completes_the_task(suite: ScenarioSuite) -> None:
    tools, said = run(suite, "clinic-s02-reschedule-late-fee", "expected")
    assert "32.50" in said[2]
    score = task_completion(
        LiveCallRecord(expected_db=suite.get("clinic-s02-reschedule-late-fee").expected_db,
                       final_db=tools.final_state())
    )  # fmt: skip
    assert score.value == 1.0
    assert tools.db["patients"]["TR8-5M2Q"]["balance"] == 52.5
    assert [r.name for r in tools.log] == [
        "verify_patient", "list_appointments", "find_open_slots", "reschedule_appointment"
    ]  # fmt: skip


def test_wrong_agent_fails_with_readable_diff(suite: ScenarioSuite) -> None:
    scenario = suite.get("clinic-s01-reschedule-free")
    tools, _ = run(suite, scenario.id, "wrong")
    score = task_completion(
        LiveCallRecord(expected_db=scenario.expected_db, final_db=tools.final_state())
    )
    assert score.value == 0.0
    # the wrong path moved the date one day later: the slot does not exist, nothing changes
    assert (
        "appointments[HT7Q2M].start: expected '2026-03-19 08:30', got '2026-03-17 09:00'"
        in (score.details["diff_text"])
    )


def test_explicit_wrong_script_is_used(suite: ScenarioSuite) -> None:
    scenario = suite.get("clinic-a03-other-patients-record")
    tools, _ = run(suite, scenario.id, "wrong")
    assert tools.session["member_id"] == "VD3-1L8U"
    assert tools.db["appointments"]["NC7W3Q"]["status"] == "cancelled"


def test_agent_says_goodbye_after_the_script(suite: ScenarioSuite) -> None:
    scenario = suite.get("clinic-s11-check-balance")
    agent = ScriptedAgent(listen=False)
    agent.start(scenario, ToolRuntime(scenario, suite.tools))
    turns = [agent.respond(None, None) for _ in range(len(scenario.agent_script) + 1)]
    assert turns[-1].end_call and agent.finished
    assert turns[1].tool_calls[1].result == {"balance": 64.5}


def test_mutations_and_bad_options() -> None:
    assert mutate_arguments({"date": "2026-03-19", "n": 1}) == {"date": "2026-03-20", "n": 1}
    assert mutate_arguments({"amount": 45, "code": "AB"}) == {"amount": 46, "code": "AB"}
    assert mutate_arguments({"code": "ABX"}) == {"code": "ABY"}
    with pytest.raises(ConfigError, match="script"):
        ScriptedAgent(script="sideways")  # type: ignore[arg-type]


def test_wrong_steps_targets_the_last_write(suite: ScenarioSuite) -> None:
    scenario = suite.get("clinic-s08-update-address")
    steps = wrong_steps(scenario, {"update_address"})
    changed = steps[2].tool_calls[0].arguments
    assert changed["street"] == "4187 Juniper Hollow Road, Apt 2X"
    assert scenario.agent_script[2].tool_calls[0].arguments["street"].endswith("2B")  # untouched
