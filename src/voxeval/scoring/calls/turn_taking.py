"""Turn-taking (EVA-X): did the agent speak at the right time? Deterministic, from the call's
speech timestamps, with the EVA-Bench reference's turn numbering and per-turn rules (the
formulas, with worked examples, are in docs/turn-taking.md).

Turns are numbered as in ``call_turns``: turn 0 is the greeting and is never scored; caller
speech the agent did not answer is merged into the caller's next turn. A turn is scored when
both sides spoke in it:

- the agent interrupted the caller: min(overlap, barge-in count, recovery latency) where the
  overlap and count sub-scores live in [0, 0.5] (interrupting is never free) and the recovery
  latency (end of the caller's speech -> the agent's first later onset) uses the latency
  curve; a sub-score that is undefined is left out of the minimum;
- the caller interrupted the agent: the yield score of how long the agent's previous reply
  kept playing after the caller started; it replaces this turn's latency score (the
  interrupted reply keeps its own score on the previous turn);
- both: the minimum of the two;
- otherwise: the latency curve on agent onset - end of the caller's speech.

The call's score is the mean of its turn scores, forced to 0 when the agent left the caller's
last words unanswered and the call ended because of it: an agent timeout, as in the reference.
An ``agent_error`` ending (the agent raised or disconnected) zeroes the call only when the run
opts in (``scoring: {turn_taking_zero_on_agent_error: true}``), our addition; by default such a
call keeps the mean of its scored turns, as the reference scores it. A call where no turn had
speech on both sides scores 0.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from statistics import mean

from voxeval.json_types import JSONReadValue
from voxeval.scoring.calls.call_turns import CallTurns, number_turns
from voxeval.scoring.calls.floor_speech import floor_speech
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.metric import FailureValue, metric
from voxeval.scoring.replies.reply_record import ScoringResources
from voxeval.scoring.score import Score
from voxeval.simulation.timeline import Timeline

# latency curve breakpoints (ms): zero at/below EARLY_ZERO, 1 from ON_TIME to LATE_START,
# zero from LATE_ZERO on; tool-call turns use the lenient upper pair
EARLY_ZERO_MS = -500.0
ON_TIME_MS = 500.0
LATE_START_MS = 2000.0
LATE_ZERO_MS = 3500.0
TOOL_LATE_START_MS = 3000.0
TOOL_LATE_ZERO_MS = 5000.0
MAX_OVERLAP_MS = 2000.0
BARGE_INS_TO_ZERO = 3  # this many distinct barge-ins in one turn zero the count sub-score
MAX_YIELD_MS = 2000.0
AGENT_INTERRUPT_CAP = 0.5
PASS_THRESHOLD = 0.8
EARLY_BUCKET_MS = 200.0
LATE_BUCKET_MS = 2750.0
TOOL_LATE_BUCKET_MS = 4000.0
BARGE_IN_MIN_S = 0.001  # an agent segment counts as a barge-in above this much overlap
ROUND_DIGITS = 4  # the reference rounds turn scores and the call score to 4 decimals
# Call ends that zero the call when the caller spoke last: the agent's silence past its timeout
# (the reference's rule); an agent error only with the opt-in setting
AGENT_FAULT_ENDS = ("agent_timeout",)
AGENT_ERROR_END = "agent_error"


def latency_score(latency_ms: float, tool_call: bool = False) -> float:
    """The piecewise-linear latency curve."""
    late_start = TOOL_LATE_START_MS if tool_call else LATE_START_MS
    late_zero = TOOL_LATE_ZERO_MS if tool_call else LATE_ZERO_MS
    if latency_ms <= EARLY_ZERO_MS or latency_ms >= late_zero:
        return 0.0
    if latency_ms < ON_TIME_MS:
        return (latency_ms - EARLY_ZERO_MS) / (ON_TIME_MS - EARLY_ZERO_MS)
    if latency_ms <= late_start:
        return 1.0
    return (late_zero - latency_ms) / (late_zero - late_start)


def overlap_score(overlap_ms: float) -> float:
    """Agent-interrupt overlap sub-score, in [0, 0.5]."""
    return max(0.0, AGENT_INTERRUPT_CAP * (1.0 - overlap_ms / MAX_OVERLAP_MS))


def count_score(barge_ins: int) -> float:
    """Agent-interrupt barge-in count sub-score for ``barge_ins`` >= 1, in [0, 0.5]."""
    return max(0.0, AGENT_INTERRUPT_CAP * (1.0 - (barge_ins - 1) / (BARGE_INS_TO_ZERO - 1)))


def yield_score(yield_ms: float) -> float:
    return min(1.0, max(0.0, 1.0 - yield_ms / MAX_YIELD_MS))


def timing_bucket(latency_ms: float, tool_call: bool) -> str:
    if latency_ms < EARLY_BUCKET_MS:
        return "early"
    return (
        "late"
        if latency_ms >= (TOOL_LATE_BUCKET_MS if tool_call else LATE_BUCKET_MS)
        else "on_time"
    )


@dataclass
class TurnScore:
    """One scored turn. ``reason`` names the rule used: latency, agent_interrupt,
    user_interrupt or dual_interrupt; ``evidence`` holds the measures (ms) and sub-scores."""

    turn: int
    reason: str
    score: float
    tool_call: bool
    latency_ms: float
    evidence: dict[str, float] = field(default_factory=dict)


def _agent_interrupt(turns: CallTurns, t: int, tool_call: bool, ev: dict[str, float]) -> float:
    user, agent = turns.user[t], turns.agent[t]
    overlaps = [sum(max(0.0, min(ue, ae) - max(us, as_)) for us, ue in user) for as_, ae in agent]
    ev["overlap_ms"] = sum(overlaps) * 1000.0
    ev["overlap_score"] = overlap_score(ev["overlap_ms"])
    parts = [ev["overlap_score"]]
    # a barge-in is an agent segment overlapping some caller speech of the turn
    barge_ins = sum(
        1
        for as_, ae in agent
        if any(min(ue, ae) - max(us, as_) > BARGE_IN_MIN_S for us, ue in user)
    )
    ev["barge_ins"] = float(barge_ins)
    if barge_ins >= 1:
        ev["count_score"] = count_score(barge_ins)
        parts.append(ev["count_score"])
    user_end = user[-1][1]
    still_speaking = any(as_ <= user_end < ae for as_, ae in agent)
    settled = [as_ for as_, _ in agent if as_ > user_end]
    if settled and not still_speaking:
        ev["recovery_ms"] = (min(settled) - user_end) * 1000.0
        ev["recovery_score"] = latency_score(ev["recovery_ms"], tool_call)
        parts.append(ev["recovery_score"])
    return min(parts)


def _user_interrupt(turns: CallTurns, t: int, ev: dict[str, float]) -> float | None:
    previous = turns.agent.get(t - 1)
    if not previous:
        return None
    ev["yield_ms"] = max(0.0, previous[-1][1] - turns.user[t][0][0]) * 1000.0
    ev["yield_score"] = yield_score(ev["yield_ms"])
    return ev["yield_score"]


def score_turn(turns: CallTurns, t: int) -> TurnScore:
    tool_call = t in turns.tool_turns
    latency_ms = turns.latency_s(t) * 1000.0
    ev: dict[str, float] = {}
    agent_part = _agent_interrupt(turns, t, tool_call, ev) if t in turns.agent_interrupted else None
    user_part = _user_interrupt(turns, t, ev) if t in turns.user_interrupted else None
    if agent_part is not None and user_part is not None:
        reason, value = "dual_interrupt", min(agent_part, user_part)
    elif agent_part is not None:
        reason, value = "agent_interrupt", agent_part
    elif user_part is not None:
        reason, value = "user_interrupt", user_part
    else:
        reason, value = "latency", latency_score(latency_ms, tool_call)
        ev["latency_score"] = value
    return TurnScore(t, reason, round(value, ROUND_DIGITS), tool_call, latency_ms, ev)


def missed_last_turn(
    turns: CallTurns, timeline: Timeline, zero_on_agent_error: bool = False
) -> bool:
    """The caller spoke last and the call ended because the agent failed to answer (timed out;
    with ``zero_on_agent_error`` also: raised or disconnected)."""
    end = timeline.end
    if end is None or turns.last_speaker() != "user":
        return False
    return end.reason in AGENT_FAULT_ENDS or (zero_on_agent_error and end.reason == AGENT_ERROR_END)


def turn_taking_score(timeline: Timeline, zero_on_agent_error: bool = False) -> Score:
    turns = number_turns(timeline)
    scored = [score_turn(turns, t) for t in turns.evaluable()]
    missed = missed_last_turn(turns, timeline, zero_on_agent_error)
    details = _details(turns, scored, missed)
    if not scored:
        details["reason"] = "no turn had speech from both the caller and the agent"
        return Score(value=0.0, passed=False, details=details)
    value = 0.0 if missed else round(mean(s.score for s in scored), ROUND_DIGITS)
    return Score(value=value, passed=value >= PASS_THRESHOLD, details=details)


def _details(turns: CallTurns, scored: list[TurnScore], missed: bool) -> dict[str, JSONReadValue]:
    buckets = {"early": 0, "on_time": 0, "late": 0}
    for s in scored:
        buckets[timing_bucket(s.latency_ms, s.tool_call)] += 1
    n = len(scored)
    last_turn = max([*turns.user, *turns.agent], default=0)
    return {
        "turns": [asdict(s) for s in scored],
        "num_turns": last_turn,
        "num_evaluated": n,
        "missed_turn": missed,
        # the turn the agent left unanswered when the call ended because of it
        "timeouts": [max(turns.user)] if missed and turns.user else [],
        "conversation_completed": not missed,
        "bucket_counts": buckets,
        "bucket_rates": {k: (v / n if n else None) for k, v in buckets.items()},
        "agent_interruption_rate": (
            sum(1 for s in scored if s.turn in turns.agent_interrupted) / n if n else None
        ),
        "user_interruption_rate": (
            sum(1 for s in scored if s.turn in turns.user_interrupted) / n if n else None
        ),
        "conditions": {
            r: sum(1 for s in scored if s.reason == r)
            for r in ("latency", "agent_interrupt", "user_interrupt", "dual_interrupt")
        },
        "pass_threshold": PASS_THRESHOLD,
    }


@metric(
    "turn_taking",
    better="higher",
    failure=FailureValue(0.0, False, "an unanswered user turn scores 0"),
    protocols=("live_call",),
)
def turn_taking(record: LiveCallRecord, resources: ScoringResources | None = None) -> Score:
    if record.timeline is None:
        return Score.not_run("no event timeline for this call")
    if not floor_speech(record.timeline, "user"):  # backchannels alone are not a turn
        return Score.not_run("the timeline has no user speech (backchannels aside)")
    return turn_taking_score(record.timeline, record.turn_taking_zero_on_agent_error)
