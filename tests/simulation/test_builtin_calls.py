"""The scripted caller and the scripted agent complete every built-in scenario (text mode);
the deliberately wrong agent fails each one with a readable diff."""

import pytest

from voxeval.benchmarks.eva.clinic_calls import CLINIC_CALLS_PATH
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.task_completion import task_completion
from voxeval.simulation.callers.scripted_caller import ScriptedCaller
from voxeval.simulation.engine import run_call
from voxeval.systems.scripted import ScriptedAgent

SUITE = load_scenario_suite(CLINIC_CALLS_PATH)


@pytest.mark.parametrize("scenario", SUITE.scenarios, ids=lambda s: s.id)
def test_expected_path_completes_and_wrong_path_fails(scenario) -> None:  # type: ignore[no-untyped-def]
    scores = {}
    for script in ("expected", "wrong"):
        tools = ToolRuntime(scenario, SUITE.tools)
        result = run_call(
            scenario, ScriptedCaller(), ScriptedAgent(script=script), tools, mode="text", seed=0
        )
        assert result.end_reason in ("user_end_call", "agent_end_call"), result.error
        record = LiveCallRecord(
            timeline=result.timeline,
            final_db=result.final_db,
            expected_db=scenario.expected_db,
            task_completion=SUITE.task_completion,  # the suite requires the session
        )
        scores[script] = task_completion(record)
    assert scores["expected"].value == 1.0, scores["expected"].details.get("diff_text")
    assert scores["wrong"].value == 0.0
    assert scores["wrong"].details.get("diff_text") or scores["wrong"].details.get(
        "session_mismatch"
    )
