"""The caller-behaviour contract: speaking plans cut at pause markers, scheduled listening
plans keep only the events inside the agent's utterance."""

from __future__ import annotations

import pytest

from voxeval.simulation.caller_behaviour import (
    Backchannel,
    BargeIn,
    CallerBehaviour,
    CallerBehaviourBase,
    ListeningPlan,
    ScheduledBehaviour,
    SpeakingPlan,
    split_at_markers,
)
from voxeval.simulation.callers.interruptions import CorrectingBehaviour
from voxeval.simulation.llm_behaviour import BehaviourStats, LLMBehaviour
from voxeval.simulation.personas import get_persona
from voxeval.simulation.rule_behaviour import RuleBehaviour


def test_split_at_markers_gives_one_pause_per_marker() -> None:
    plan = split_at_markers("My code is... um… AB12.", 1.2)
    assert plan.pieces == ("My code is", "um", "AB12.")
    assert plan.pauses_s == (1.2, 1.2)
    assert plan.text == "My code is um AB12."
    assert split_at_markers("  No pause here. ", 1.0) == SpeakingPlan(("No pause here.",))


def test_speaking_plan_checks_its_shape() -> None:
    with pytest.raises(ValueError, match="one pause between"):
        SpeakingPlan(("a", "b"))
    with pytest.raises(ValueError, match="negative"):
        SpeakingPlan(("a", "b"), (-0.1,))
    with pytest.raises(ValueError, match="at least one"):
        SpeakingPlan(())


def test_scheduled_listening_plan_drops_events_past_the_utterance() -> None:
    behaviour = ScheduledBehaviour(backchannels_at_s=(1.0, 3.0), barge_in_at_s=2.5)
    assert isinstance(behaviour, CallerBehaviour)
    long = behaviour.listening_plan("a long answer", 4.0)
    assert long.backchannels == (Backchannel(1.0), Backchannel(3.0))
    assert long.barge_in == BargeIn(2.5)
    short = behaviour.listening_plan("short", 2.0)
    assert short.backchannels == (Backchannel(1.0),) and short.barge_in is None


def test_stats_is_declared_none_by_default_and_the_llm_behaviour_overrides_it() -> None:
    class Quiet(CallerBehaviourBase):
        def speaking_plan(self, text: str) -> SpeakingPlan:
            return SpeakingPlan((text,))

        def listening_plan(self, agent_text: str, agent_duration_s: float) -> ListeningPlan:
            return ListeningPlan()

    assert isinstance(Quiet(), CallerBehaviour) and Quiet().stats is None
    assert ScheduledBehaviour().stats is None
    persona = get_persona(None)
    rules = RuleBehaviour(persona, "en", 1)
    assert rules.stats is None
    llm = LLMBehaviour(None, rules, seed=1)  # type: ignore[arg-type]  # never asked
    llm.stats.fallbacks = 3
    assert isinstance(llm.stats, BehaviourStats) and llm.stats.as_dict()["fallbacks"] == 3
    # the correcting wrapper forwards the declared member of what it wraps
    assert CorrectingBehaviour(rules, persona, lambda: False).stats is None
    assert CorrectingBehaviour(llm, persona, lambda: False).stats is llm.stats
