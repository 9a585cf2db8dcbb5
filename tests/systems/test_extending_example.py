"""The system written in docs/extending.md works as printed: one module serves a single-turn
reply and, through the adapter, a live call."""

from __future__ import annotations

import re
from pathlib import Path

from voxeval.benchmarks.eva.clinic_calls import CLINIC_CALLS_PATH
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.config import SystemSpec
from voxeval.systems.base import CALL, REPLY, Turn
from voxeval.systems.factory import build_system, missing_capability, open_call

DOC = Path(__file__).resolve().parents[2] / "docs" / "extending.md"


def _system_example() -> str:
    section = DOC.read_text().split("## A system under test")[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    return match.group(1)


def test_the_documented_system_serves_both_protocols() -> None:
    namespace: dict[str, object] = {"__name__": "docs_extending_example"}
    exec(compile(_system_example(), str(DOC), "exec"), namespace)
    spec = SystemSpec.model_validate({"name": "mine", "type": "echo", "prefix": "heard"})
    assert missing_capability(spec, "single_turn", REPLY) is None
    assert missing_capability(spec, "live_call", CALL) is None

    system = build_system(spec, None)
    reply = system.reply([Turn(role="user", text="hello")])
    assert reply.text == "heard hello"

    suite = load_scenario_suite(CLINIC_CALLS_PATH)
    scenario = suite.scenarios[0]
    call = open_call(system)
    call.start(scenario, ToolRuntime(scenario, suite.tools, suite.trust))
    turn = call.respond(None, "I need to move my appointment")
    assert turn.text == "heard I need to move my appointment"
