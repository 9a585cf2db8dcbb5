"""The EVA-Bench composites as data, and the verdict of one trial (PROTOCOLS.md section 3).

A trial passes a composite when every component metric clears its pass rule:

- EVA-A (accuracy): task_completion == 1, faithfulness >= 0.5, agent_speech_fidelity >= 0.95
  (the audio judge);
- EVA-X (experience): conversation_progression >= 0.5, turn_taking >= 0.8,
  conciseness >= 0.5;
- ``eva_a_asr_proxy``: EVA-A with the offline ``agent_speech_fidelity_asr`` (Whisper
  transcript checked for the key entities) in place of the audio judge. It is NOT EVA-A: an
  ASR can miss what a listener would hear and the reverse, so its numbers are only a stand-in
  for runs without an audio judge.

The thresholds are the metrics' own constants. A trial is decided only when every component
ran on it; a trial whose system under test failed is a failed trial whatever its partial
call scored (the fault is the system's result); a unit without scores (failed on our side,
or not run yet) is "not scored"."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from voxeval.scoring.call_judges.judged_ratings import PASS_THRESHOLD as JUDGED_PASS
from voxeval.scoring.calls.speech_fidelity import AGENT_PASS as SPEECH_FIDELITY_PASS
from voxeval.scoring.calls.task_completion import COMPLETED
from voxeval.scoring.calls.turn_taking import PASS_THRESHOLD as TURN_TAKING_PASS
from voxeval.store.records import ScoreRow, UnitRecord

# Judge scores are means of normalised ratings in floating point: a value meant to sit on the
# threshold (0.5) must not fail by a rounding error.
TOLERANCE = 1e-9

JUDGE = "a judge: set `judge:`"
AUDIO_JUDGE = "an audio judge: set `audio_judge:`"
AUDIO_ASR = "an audio-mode call and the scoring ASR"


@dataclass(frozen=True)
class Component:
    """One component metric of a composite and its pass rule (``>= threshold``, or ``==``
    when ``exact``)."""

    metric: str
    threshold: float
    exact: bool = False
    needs: str = ""  # what the metric needs beyond the recorded call, for the missing reason

    @property
    def rule(self) -> str:
        return f"{self.metric} {'==' if self.exact else '>='} {self.threshold:g}"

    def passes(self, value: float) -> bool:
        close = math.isclose(value, self.threshold, abs_tol=TOLERANCE)
        return close if self.exact else close or value >= self.threshold

    @property
    def not_scored_reason(self) -> str:
        """Why a done trial has no score at all for this metric."""
        reason = "no score stored: the run did not score this metric"
        return f"{reason} (it needs {self.needs})" if self.needs else reason


@dataclass(frozen=True)
class Composite:
    name: str
    label: str
    components: tuple[Component, ...]
    note: str = ""  # shown with every number of the composite

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(c.metric for c in self.components)

    @property
    def definition(self) -> str:
        return "a trial passes when " + " and ".join(c.rule for c in self.components)


_TASK = Component("task_completion", COMPLETED, exact=True)
_FAITHFULNESS = Component("faithfulness", JUDGED_PASS, needs=JUDGE)

EVA_A = Composite(
    "eva_a",
    "EVA-A",
    (
        _TASK,
        _FAITHFULNESS,
        Component("agent_speech_fidelity", SPEECH_FIDELITY_PASS, needs=AUDIO_JUDGE),
    ),
)
EVA_X = Composite(
    "eva_x",
    "EVA-X",
    (
        Component("conversation_progression", JUDGED_PASS, needs=JUDGE),
        Component("turn_taking", TURN_TAKING_PASS),
        Component("conciseness", JUDGED_PASS, needs=JUDGE),
    ),
)
EVA_A_ASR_PROXY = Composite(
    "eva_a_asr_proxy",
    "EVA-A ASR proxy (not EVA-A)",
    (
        _TASK,
        _FAITHFULNESS,
        Component("agent_speech_fidelity_asr", SPEECH_FIDELITY_PASS, needs=AUDIO_ASR),
    ),
    note=(
        "NOT EVA-A: the audio-judge agent_speech_fidelity is replaced by the offline "
        "agent_speech_fidelity_asr (the scoring ASR's transcript checked for key entities); "
        "an offline stand-in, not comparable with published EVA-A numbers"
    ),
)
COMPOSITES = (EVA_A, EVA_X, EVA_A_ASR_PROXY)


@dataclass(frozen=True)
class TrialScores:
    """The stored scores of one planned trial (a unit) of one system.

    ``not_scored`` says why a unit has no scores at all (it failed on our side, or has not
    run yet); ``system_fault`` is the cause when the system under test failed."""

    scenario: str
    condition: str
    trial: int
    rows: Mapping[str, ScoreRow] = field(default_factory=dict)
    not_scored: str | None = None
    system_fault: str | None = None


@dataclass(frozen=True)
class Verdict:
    """``passed`` is None when the trial cannot be decided: a component did not run
    (``missing``: metric -> reason) or the trial has no scores (``not_scored``)."""

    passed: bool | None
    missing: Mapping[str, str] = field(default_factory=dict)
    not_scored: str | None = None
    system_fault: str | None = None


def _unit_not_scored(unit: UnitRecord) -> str | None:
    if unit.status == "done":
        return None
    if unit.status == "failed":
        cause = unit.cause or "unknown cause"
        return f"failed on our side ({cause}): {unit.error or 'no message'}"
    return f"not run yet ({unit.status})"


def collect_trials(
    rows: Iterable[ScoreRow], units: Sequence[UnitRecord] | None = None
) -> list[TrialScores]:
    """One ``TrialScores`` per planned unit of ``units`` (in their order), or, without units,
    per (scenario, condition, trial) that has score rows. Rows of one system only."""
    by_trial: dict[tuple[str, str, int], dict[str, ScoreRow]] = {}
    systems = set()
    for row in rows:
        systems.add(row.system)
        by_trial.setdefault((row.item_id, row.condition, row.trial), {})[row.metric] = row
    systems.update(unit.system for unit in units or ())
    if len(systems) > 1:  # trials of different systems would be merged into one
        raise ValueError(f"composites take one system's scores, got {sorted(systems)}")
    trials: list[TrialScores] = []
    seen: set[tuple[str, str, int]] = set()
    for unit in units or ():
        key = (unit.item_id, unit.condition, unit.trial)
        seen.add(key)
        not_scored = _unit_not_scored(unit)
        trials.append(
            TrialScores(
                *key,
                rows={} if not_scored else by_trial.get(key, {}),
                not_scored=not_scored,
                system_fault=unit.system_fault or _row_fault(by_trial.get(key, {})),
            )
        )
    for key, scored in by_trial.items():  # rows without a unit record (no units given)
        if key not in seen:
            trials.append(TrialScores(*key, rows=scored, system_fault=_row_fault(scored)))
    return trials


def _row_fault(rows: Mapping[str, ScoreRow]) -> str | None:
    """The system-fault cause the scores of a unit carry (``details["system_fault"]``)."""
    for row in rows.values():
        cause = row.details.get("system_fault")
        if cause:
            return str(cause)
    return None


def _not_run_reason(row: ScoreRow) -> str:
    reason = row.error or "no value stored"
    return f"pending retry: {reason}" if row.pending else reason


def judge_trial(composite: Composite, trial: TrialScores) -> Verdict:
    """Pass, fail or undecided (with the reasons) for one trial."""
    if trial.not_scored is not None:
        return Verdict(None, not_scored=trial.not_scored)
    if trial.system_fault is not None:  # the system's failure is the trial's result
        return Verdict(False, system_fault=trial.system_fault)
    missing: dict[str, str] = {}
    verdicts: list[bool] = []
    for component in composite.components:
        row = trial.rows.get(component.metric)
        if row is None:
            missing[component.metric] = component.not_scored_reason
        elif not row.ran or row.value is None:
            missing[component.metric] = _not_run_reason(row)
        else:
            verdicts.append(component.passes(float(row.value)))
    if missing:
        return Verdict(None, missing=missing)
    return Verdict(all(verdicts))
