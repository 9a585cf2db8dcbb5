"""What a simulated caller says when it cuts into the agent, drawn from the scenario: a
correction of a key fact it misstated earlier, a key fact the agent has not asked for yet, or
an urgent question built from a must-have criterion of its goal. The persona sets how often
(``interruption_content_rate``, ``slip_rate``); the rest of the barge-ins are impatience alone.

A pending correction makes the caller cut into the agent's next utterance long enough to
interrupt (``CorrectingBehaviour``), as a person who hears that the agent took down a wrong
date does; the barge-in time follows the persona's Beta, at least ``BARGE_IN_EARLIEST_S``."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Any

import numpy as np

from voxeval.benchmarks.eva.scenario import Scenario
from voxeval.simulation.caller_behaviour import (
    BargeIn,
    BehaviourCounts,
    CallerBehaviour,
    ListeningPlan,
    SpeakingPlan,
)
from voxeval.simulation.personas import BARGE_IN_EARLIEST_S, Persona

MIN_CUT_S = 2.0  # a correction cuts into agent utterances at least this long (else: next turn)
_LAST_DIGIT = re.compile(r"(\d)(?!.*\d)")


def misstated(value: str) -> str | None:
    """A plausible slip of ``value``: an ISO date one day later, else the last digit changed
    (``FY2-9K3M`` -> ``FY2-9K4M``); None for a value without digits (names are not misstated)."""
    try:
        day = date.fromisoformat(value.strip()[:10])
    except ValueError:
        pass
    else:
        return (day + timedelta(days=1)).isoformat() + value.strip()[10:]
    match = _LAST_DIGIT.search(value)
    if match is None:
        return None
    digit = str((int(match.group(1)) + 1) % 10)
    return value[: match.start()] + digit + value[match.end() :]


@dataclass
class Correction:
    label: str
    value: str  # the right value
    said: str  # the wrong value the caller gave


class InterruptionPlanner:
    """One call's interruption content for a caller with ``persona`` (seeded)."""

    def __init__(self, persona: Persona, seed: int) -> None:
        self.persona = persona
        self.rng = np.random.default_rng([abs(seed), 0x17E])
        self.slip_label: str | None = None
        self.pending: Correction | None = None
        self._slipped = False

    def start(self, scenario: Scenario) -> None:
        """Decide once per call whether (and on which key fact) the caller slips."""
        self.pending, self._slipped, self.slip_label = None, False, None
        if self.rng.random() < self.persona.slip_rate:
            slips = [label for label, value in scenario.entities.items() if misstated(value)]
            if slips:
                self.slip_label = slips[int(self.rng.integers(len(slips)))]

    def value_to_say(self, label: str, value: str) -> str:
        """The value the caller gives for ``label``: the slip the first time, if planned (and
        then a correction is pending); the right value otherwise, which settles a pending
        correction of that label."""
        if label == self.slip_label and not self._slipped:
            wrong = misstated(value)
            if wrong is not None:
                self._slipped = True
                self.pending = Correction(label, value, wrong)
                return wrong
        if self.pending is not None and self.pending.label == label:
            self.pending = None
        return value

    def take_correction(self) -> Correction | None:
        correction, self.pending = self.pending, None
        return correction

    def carries_content(self) -> bool:
        """Whether this barge-in carries content (one draw per barge-in)."""
        return bool(self.rng.random() < self.persona.interruption_content_rate)

    def pick(self, options: list[str]) -> str | None:
        return options[int(self.rng.integers(len(options)))] if options else None


@dataclass
class CorrectingBehaviour:
    """``inner``'s plans, plus a barge-in into every long enough agent utterance while a
    correction is pending (``pending()``) and the persona cuts in at all."""

    inner: CallerBehaviour
    persona: Persona
    pending: Callable[[], bool]

    def speaking_plan(self, text: str) -> SpeakingPlan:
        return self.inner.speaking_plan(text)

    def listening_plan(self, agent_text: str, agent_duration_s: float) -> ListeningPlan:
        plan = self.inner.listening_plan(agent_text, agent_duration_s)
        wants = self.pending() and self.persona.barge_in_rate > 0
        if plan.barge_in is not None or not wants or agent_duration_s < MIN_CUT_S:
            return plan
        a, b = self.persona.barge_in_beta
        at = max(BARGE_IN_EARLIEST_S, agent_duration_s * a / (a + b))
        at = min(at, agent_duration_s - 0.3)
        kept = tuple(bc for bc in plan.backchannels if bc.at_s < at - 0.5)
        return replace(plan, backchannels=kept, barge_in=BargeIn(at))

    @property
    def stats(self) -> BehaviourCounts | None:
        """The inner behaviour's counts (the same object, not a copy)."""
        return self.inner.stats

    # A transparent proxy for the rest: the inner behaviour's own attributes (seed, ...),
    # each of its own type. ``stats`` above is the declared member and forwarded explicitly.
    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet (a copy being built)
            raise AttributeError(name)
        return getattr(self.inner, name)
