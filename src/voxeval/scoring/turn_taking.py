"""Turn-taking (EVA-X): did the agent speak at the right time? Deterministic, from the call's
speech timestamps.

Turn segmentation: user speech segments are grouped by their ``turn`` number (one group = one
user turn, which may hold several segments). The agent's response to user turn k is every
assistant segment that *starts* at or after turn k's first start and before turn k+1's first
start (or the end of the call). Assistant speech before the first user turn is the greeting; it
is only scored if the user interrupted it. Tool calls belong to a turn when their timestamp
falls in that window or their ``turn`` equals one of the response segments' turn numbers.

Per-turn routing (EVA-Bench appendix E.5.3):
- uninterrupted: the latency curve on response latency (agent onset - end of user speech);
- agent interrupted the user (a response segment overlaps the user's speech): 0.5 x the mean
  of the sub-scores overlap, barge-in count and post-interrupt recovery latency (the paper
  caps this case at 0.5; the recovery sub-score is omitted when there is no settled response
  or the agent was still speaking when the user stopped);
- user interrupted the agent (the next user turn starts while the response is still playing,
  or a response segment is marked interrupted): yield score on the time the agent kept
  talking after the user started;
- both: the mean of the two scores above (our reading; the paper's formula for this case is
  not in the text we implement from);
- no response (timeout): the whole conversation scores 0. The final user turn is exempt when
  the call ended by a hang-up (either side) or ended less than the late-zero breakpoint after
  the user stopped for a reason other than an agent fault (a timeout, or the agent raised or
  disconnected: an unanswered turn the agent failed on always scores 0).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from statistics import mean
from typing import Any

from voxeval.registry import register
from voxeval.scoring.live_call_record import LiveCallRecord
from voxeval.scoring.score import Score
from voxeval.simulation.timeline import SpeakerSegment, Timeline

# latency curve breakpoints (ms): zero at/below EARLY_ZERO, 1 from ON_TIME to LATE_START,
# zero from LATE_ZERO on; tool-call turns use the lenient upper pair
EARLY_ZERO_MS = -500.0
ON_TIME_MS = 500.0
LATE_START_MS = 2000.0
LATE_ZERO_MS = 3500.0
TOOL_LATE_START_MS = 3000.0
TOOL_LATE_ZERO_MS = 5000.0
MAX_OVERLAP_MS = 2000.0
MAX_BARGE_INS = 3
MAX_YIELD_MS = 2000.0
AGENT_INTERRUPT_CAP = 0.5
PASS_THRESHOLD = 0.8
EARLY_BUCKET_MS = 200.0
LATE_BUCKET_MS = 2750.0
TOOL_LATE_BUCKET_MS = 4000.0
# Call ends that are the agent's fault (silence past its timeout, or it raised/disconnected)
AGENT_FAULT_ENDS = ("agent_timeout", "agent_error")


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
class Exchange:
    """One user turn and the agent's response to it (times in seconds, latencies in ms)."""

    user_turn: int
    user_start: float
    user_end: float
    response_start: float | None
    response_end: float | None
    tool_call: bool
    condition: str = "uninterrupted"
    latency_ms: float | None = None
    score: float | None = None
    sub_scores: dict[str, float] = field(default_factory=dict)
    measures: dict[str, float] = field(default_factory=dict)  # overlap_ms, barge_ins, yield_ms


def _overlap(a: SpeakerSegment, b: SpeakerSegment) -> float:
    return max(0.0, min(a.end, b.end) - max(a.start, b.start))


def _user_turns(timeline: Timeline) -> list[list[SpeakerSegment]]:
    groups: dict[int, list[SpeakerSegment]] = {}
    for seg in timeline.speech("user"):
        groups.setdefault(seg.turn, []).append(seg)
    return sorted(groups.values(), key=lambda g: min(s.start for s in g))


def segment_exchanges(timeline: Timeline) -> tuple[list[Exchange], list[SpeakerSegment]]:
    """The exchanges of a call, plus the greeting segments (agent speech before any user turn).
    Conditions are assigned; scores are not (see ``score_exchanges``)."""
    turns = _user_turns(timeline)
    agent = timeline.speech("assistant")
    first_user = min(s.start for s in turns[0]) if turns else float("inf")
    greeting = [a for a in agent if a.start < first_user]
    exchanges: list[Exchange] = []
    for k, group in enumerate(turns):
        u_start, u_end = min(s.start for s in group), max(s.end for s in group)
        window_end = min(s.start for s in turns[k + 1]) if k + 1 < len(turns) else float("inf")
        response = [a for a in agent if u_start <= a.start < window_end]
        agent_turns = {a.turn for a in response}
        first_start = min((a.start for a in response), default=None)
        tool_call = any(
            (u_start <= t.t < window_end) or (t.turn in agent_turns) for t in timeline.tools
        )
        ex = Exchange(
            user_turn=group[0].turn,
            user_start=u_start,
            user_end=u_end,
            response_start=first_start,
            response_end=max((a.end for a in response), default=None),
            tool_call=tool_call,
        )
        if first_start is not None:
            ex.latency_ms = (first_start - u_end) * 1000.0
        _classify(ex, group, response, window_end)
        exchanges.append(ex)
    return exchanges, greeting


def _classify(
    ex: Exchange, user: list[SpeakerSegment], response: list[SpeakerSegment], next_start: float
) -> None:
    if not response:
        ex.condition = "no_response"
        return
    overlaps = [sum(_overlap(a, u) for u in user) for a in response]
    agent_interrupted = any(o > 0 for o in overlaps)
    user_interrupted = ex.response_end is not None and (
        ex.response_end > next_start or any(a.interrupted for a in response)
    )
    if agent_interrupted and user_interrupted:
        ex.condition = "both"
    elif agent_interrupted:
        ex.condition = "agent_interrupted"
    elif user_interrupted:
        ex.condition = "user_interrupted"
    if agent_interrupted:
        overlap_ms = sum(overlaps) * 1000.0
        barge_ins = sum(1 for o in overlaps if o > 0)
        ex.sub_scores["overlap"] = max(0.0, 1.0 - overlap_ms / MAX_OVERLAP_MS)
        ex.sub_scores["barge_in_count"] = max(0.0, 1.0 - barge_ins / MAX_BARGE_INS)
        still_speaking = any(a.start < ex.user_end < a.end for a in response)
        settled = [a for a in response if a.start >= ex.user_end]
        if settled and not still_speaking:
            recovery_ms = (settled[0].start - ex.user_end) * 1000.0
            ex.sub_scores["post_interrupt"] = latency_score(recovery_ms, ex.tool_call)
        ex.measures["overlap_ms"] = overlap_ms
        ex.measures["barge_ins"] = float(barge_ins)
    if user_interrupted:
        assert ex.response_end is not None
        # an interrupted last response (no next user turn) stopped at once: nothing to yield
        yield_ms = 0.0
        if next_start != float("inf"):
            yield_ms = max(0.0, (ex.response_end - next_start) * 1000.0)
        ex.measures["yield_ms"] = yield_ms
        ex.sub_scores["yield"] = yield_score(yield_ms)


def _agent_interrupt_score(sub: dict[str, float]) -> float:
    parts = [sub[k] for k in ("overlap", "barge_in_count", "post_interrupt") if k in sub]
    return AGENT_INTERRUPT_CAP * mean(parts)


def score_exchanges(exchanges: list[Exchange], timeline: Timeline) -> None:
    """Fill ``score`` (and mark timeouts) in place."""
    for n, ex in enumerate(exchanges):
        if ex.condition == "no_response":
            last = n == len(exchanges) - 1
            ex.condition = "timeout" if _is_timeout(ex, last, timeline) else "unanswered_at_end"
            ex.score = 0.0 if ex.condition == "timeout" else None
            continue
        assert ex.latency_ms is not None
        if ex.condition == "uninterrupted":
            ex.score = latency_score(ex.latency_ms, ex.tool_call)
        elif ex.condition == "agent_interrupted":
            ex.score = _agent_interrupt_score(ex.sub_scores)
        elif ex.condition == "user_interrupted":
            ex.score = ex.sub_scores["yield"]
        else:
            ex.score = mean([_agent_interrupt_score(ex.sub_scores), ex.sub_scores["yield"]])


def _is_timeout(ex: Exchange, last: bool, timeline: Timeline) -> bool:
    if not last:
        return True
    end = timeline.end
    if end is None:
        return False
    if end.reason in AGENT_FAULT_ENDS:  # the agent failed to answer: never exempt
        return True
    if end.reason in ("user_end_call", "agent_end_call"):
        return False
    late_zero = TOOL_LATE_ZERO_MS if ex.tool_call else LATE_ZERO_MS
    return (end.t - ex.user_end) * 1000.0 >= late_zero


def turn_taking_score(timeline: Timeline) -> Score:
    exchanges, greeting = segment_exchanges(timeline)
    score_exchanges(exchanges, timeline)
    greeting_score = _greeting_yield(greeting, exchanges)
    scored = [ex.score for ex in exchanges if ex.score is not None]
    if greeting_score is not None:
        scored.append(greeting_score)
    timeouts = [ex.user_turn for ex in exchanges if ex.condition == "timeout"]
    details = _details(exchanges, greeting_score, timeouts)
    if not scored:
        return Score.not_run("no user turn was answered by the agent", **details)
    value = 0.0 if timeouts else float(mean(scored))
    return Score(value=value, passed=value >= PASS_THRESHOLD, details=details)


def _greeting_yield(greeting: list[SpeakerSegment], exchanges: list[Exchange]) -> float | None:
    if not greeting or not exchanges:
        return None
    end = max(a.end for a in greeting)
    first_user = exchanges[0].user_start
    if end <= first_user and not any(a.interrupted for a in greeting):
        return None
    return yield_score(max(0.0, (end - first_user) * 1000.0))


def _details(
    exchanges: list[Exchange], greeting_score: float | None, timeouts: list[int]
) -> dict[str, Any]:
    answered = [ex for ex in exchanges if ex.latency_ms is not None]
    buckets = {"early": 0, "on_time": 0, "late": 0}
    for ex in answered:
        assert ex.latency_ms is not None
        buckets[timing_bucket(ex.latency_ms, ex.tool_call)] += 1
    n = len(answered)
    return {
        "turns": [asdict(ex) for ex in exchanges],
        "greeting_yield_score": greeting_score,
        "timeouts": timeouts,
        "conversation_completed": not timeouts,
        "bucket_counts": buckets,
        "bucket_rates": {k: (v / n if n else None) for k, v in buckets.items()},
        "conditions": {
            c: sum(1 for ex in exchanges if ex.condition == c)
            for c in ("uninterrupted", "agent_interrupted", "user_interrupted", "both", "timeout")
        },
        "pass_threshold": PASS_THRESHOLD,
    }


@register("metric", "turn_taking")
def turn_taking(record: LiveCallRecord, resources: object = None) -> Score:
    if record.timeline is None:
        return Score.not_run("no event timeline for this call")
    if not record.timeline.speech("user"):
        return Score.not_run("the timeline has no user speech")
    return turn_taking_score(record.timeline)
