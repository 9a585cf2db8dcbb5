"""Correct calls of the built-in live-call domains, made offline in milliseconds: the scripted
caller against the scripted agent playing each scenario's expected path, in text mode. They
are the clean examples of the development sets and the base the defects are injected into."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from voxeval.audio import Audio
from voxeval.benchmarks.eva.clinic_calls import CLINIC_CALLS_PATH
from voxeval.benchmarks.eva.helpdesk_calls import HELPDESK_CALLS_PATH
from voxeval.benchmarks.eva.scenario import Scenario, ScenarioSuite, load_scenario_suite
from voxeval.benchmarks.eva.utility_calls import UTILITY_CALLS_PATH
from voxeval.benchmarks.tools import ToolRuntime
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.task_completion import task_completion
from voxeval.simulation.callers.scripted_caller import ScriptedCaller
from voxeval.simulation.engine import run_call
from voxeval.simulation.timeline import Timeline
from voxeval.systems.scripted import ScriptedAgent

BUILTIN_DOMAINS = (CLINIC_CALLS_PATH, HELPDESK_CALLS_PATH, UTILITY_CALLS_PATH)
# judged as a cascade: the judge sees the agent's transcript of the caller (text mode: the
# words said) and the text the agent meant to speak
PIPELINE = "cascade"


@dataclass(frozen=True)
class CleanCall:
    """A correct call of one scenario: the agent followed its policy and completed the task."""

    suite: ScenarioSuite
    scenario: Scenario
    timeline: Timeline
    final_db: dict[str, Any]
    initial_db: dict[str, Any]

    @property
    def domain(self) -> str:
        return self.scenario.domain or self.suite.name

    def record(
        self, timeline: Timeline | None = None, *, tracks: Mapping[str, Audio] | None = None
    ) -> LiveCallRecord:
        """The call as metrics read it, with an edited ``timeline`` (and recorded audio
        ``tracks``) when given."""
        fields: dict[str, Any] = {
            "timeline": timeline if timeline is not None else self.timeline,
            "final_db": self.final_db,
            "expected_db": self.scenario.expected_db,
            "initial_db": self.initial_db,
            "scenario": self.scenario,
            "task_completion": self.suite.task_completion,
            "pipeline": PIPELINE,
        }
        if tracks is not None:
            fields["tracks"] = tracks
        return LiveCallRecord(**fields)


@functools.lru_cache(maxsize=1)
def builtin_suites() -> tuple[ScenarioSuite, ...]:
    """The built-in domains, loaded once per process (read only: calls copy what they
    change)."""
    return tuple(load_scenario_suite(path) for path in BUILTIN_DOMAINS)


def scenario_order(
    suites: Sequence[ScenarioSuite], seed: int
) -> Iterator[tuple[ScenarioSuite, Scenario]]:
    """Every scenario once: each domain's scenarios in a seeded shuffle, the domains taken in
    turn, so that a small set still covers every domain."""
    rng = np.random.default_rng(seed)
    queues = []
    for suite in suites:
        order = rng.permutation(len(suite.scenarios))
        queues.append([(suite, suite.scenarios[int(i)]) for i in order])
    while any(queues):
        for queue in queues:
            if queue:
                yield queue.pop(0)


def clean_call(suite: ScenarioSuite, scenario: Scenario, seed: int = 0) -> CleanCall | None:
    """The expected path of ``scenario``; None when it does not end normally with the task
    completed (such a call would not be a clean example)."""
    tools = ToolRuntime(scenario, suite.tools, suite.trust, suite.tool_arguments)
    # No drawn pauses, backchannels or barge-ins: a clean example is one plain turn after
    # another, so the injected defects are the only thing wrong with it.
    caller = ScriptedCaller(behaviour_kind="none")
    agent = ScriptedAgent(script="expected")
    result = run_call(scenario, caller, agent, tools, mode="text", seed=seed)
    if result.end_reason not in ("user_end_call", "agent_end_call"):
        return None
    call = CleanCall(
        suite=suite,
        scenario=scenario,
        timeline=result.timeline,
        final_db=result.final_db,
        initial_db=result.initial_db,
    )
    if task_completion(call.record()).value != 1.0:
        return None
    return call
