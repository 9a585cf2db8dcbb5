"""Full-duplex turn metrics of a live call, from its recorded timeline (docs/turn-taking.md,
section 9): how fast the agent yields to a caller barging in, whether it yields at all,
whether it mistakes the caller's "mm-hm" or a pause for its turn, and how much both talk at
once. A call with nothing to measure (no barge-in, no pause ...) is not run with the reason,
never given a default value. On a failed call they are descriptive (``system_fault``): the
partial call is measured where it can be, otherwise the metric is not run (a call that failed
before any barge-in says nothing about barge-ins). Their directions are in
``metric_direction``: ``backchannel_rate`` describes the caller and has none."""

from __future__ import annotations

from statistics import mean, median
from typing import Any

from voxeval.json_types import JSONReadValue
from voxeval.scoring.calls.duplex_timeline import (
    barge_ins,
    caller_pauses,
    covered_s,
    false_yields,
    heard_backchannels,
    overlap_s,
    spans,
)
from voxeval.scoring.calls.floor_speech import backchannels, floor_speech
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.metric import DESCRIPTIVE, metric
from voxeval.scoring.replies.reply_record import ScoringResources
from voxeval.scoring.score import Score

# A barge-in is handled when the agent's audio stopped within this long of the caller's onset
# (a person talked over expects the other to stop within about a second).
BARGE_IN_HANDLED_MS = 1000.0
_NO_TIMELINE = "no event timeline for this call"


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 3)


@metric("yield_latency", better="lower", failure=DESCRIPTIVE, protocols=("live_call",))
def yield_latency(record: LiveCallRecord, resources: ScoringResources | None = None) -> Score:
    """Median milliseconds from the onset of a caller barge-in to where the agent's audio
    stopped, over the barge-ins the agent yielded to (its segment is marked interrupted).
    Barge-ins it ignored (it spoke to its natural end) are counted in ``ignored`` with how long
    it kept talking, never averaged in; barge-ins the call's end cut short are ``unresolved``."""
    if record.timeline is None:
        return Score.not_run(_NO_TIMELINE)
    found = barge_ins(record.timeline)
    if not found:
        return Score.not_run("the caller never barged in while the agent spoke")
    yielded = [b for b in found if b.yielded]
    ignored = [b for b in found if not b.yielded and not b.cut_by_call_end]
    counts: dict[str, Any] = {
        "barge_ins": len(found),
        "yielded": len(yielded),
        "ignored": len(ignored),
        "ignored_run_on_ms": [round(b.stop_ms, 3) for b in ignored],
        "unresolved": sum(1 for b in found if b.cut_by_call_end and not b.yielded),
    }
    if not yielded and not ignored:
        return Score.not_run("every barge-in was cut short by the end of the call", **counts)
    if not yielded:
        return Score.not_run(f"the agent yielded to none of {len(found)} barge-ins", **counts)
    latencies = [round(b.stop_ms, 3) for b in yielded]
    details = {
        "median_ms": median(latencies),
        "mean_ms": mean(latencies),
        "count": len(latencies),
        "per_barge_in_ms": latencies,
        **counts,
    }
    return Score(value=median(latencies), details=details)


@metric("barge_in_handling_rate", better="higher", failure=DESCRIPTIVE, protocols=("live_call",))
def barge_in_handling_rate(
    record: LiveCallRecord, resources: ScoringResources | None = None
) -> Score:
    """Share of caller barge-ins after which the agent's audio stopped within
    ``BARGE_IN_HANDLED_MS`` (1,000 ms). A barge-in the call's end cut off within that time
    cannot be judged and is left out (``unresolved``)."""
    if record.timeline is None:
        return Score.not_run(_NO_TIMELINE)
    found = barge_ins(record.timeline)
    if not found:
        return Score.not_run("the caller never barged in while the agent spoke")
    judged = [b for b in found if not (b.cut_by_call_end and b.stop_ms <= BARGE_IN_HANDLED_MS)]
    handled = [b for b in judged if b.stop_ms <= BARGE_IN_HANDLED_MS]
    details: dict[str, JSONReadValue] = {
        "threshold_ms": BARGE_IN_HANDLED_MS,
        "barge_ins": len(found),
        "judged": len(judged),
        "handled": len(handled),
        "unresolved": len(found) - len(judged),
        "per_barge_in": [
            {"turn": b.turn, "start": b.start, "stop_ms": round(b.stop_ms, 3),
             "handled": b.stop_ms <= BARGE_IN_HANDLED_MS, "yielded": b.yielded}
            for b in judged
        ],
    }  # fmt: skip
    if not judged:
        return Score.not_run("every barge-in was cut short by the end of the call", **details)
    return Score(value=len(handled) / len(judged), details=details)


@metric("backchannel_rate", better=None, failure=DESCRIPTIVE, protocols=("live_call",))
def backchannel_rate(record: LiveCallRecord, resources: ScoringResources | None = None) -> Score:
    """Caller backchannels ("mm-hm") per minute of agent floor speech. Descriptive: it
    describes the caller (voxeval's simulator), and is the context of
    ``backchannel_yield_rate``."""
    if record.timeline is None:
        return Score.not_run(_NO_TIMELINE)
    agent_s = covered_s(spans(floor_speech(record.timeline, "assistant")))
    if agent_s <= 0.0:
        return Score.not_run("the agent never spoke")
    said = heard_backchannels(record.timeline)
    details = {
        "backchannels": len(said),
        "over_agent_speech": sum(1 for b in said if b.agent_span is not None),
        "agent_speech_s": agent_s,
    }
    return Score(value=len(said) / (agent_s / 60.0), details=details)


@metric("backchannel_yield_rate", better="lower", failure=DESCRIPTIVE, protocols=("live_call",))
def backchannel_yield_rate(
    record: LiveCallRecord, resources: ScoringResources | None = None
) -> Score:
    """Share of the caller's backchannels said over agent speech that the agent wrongly
    yielded to: its segment was cut short with no caller barge-in in it, and this was the
    caller's last backchannel before the stop."""
    if record.timeline is None:
        return Score.not_run(_NO_TIMELINE)
    over = [b for b in heard_backchannels(record.timeline) if b.agent_span is not None]
    if not over:
        return Score.not_run("the caller never backchannelled while the agent spoke")
    yielded = [b.start for b in over if b.agent_yielded]
    details = {"backchannels": len(over), "yielded_to": len(yielded), "yielded_at": yielded}
    return Score(value=len(yielded) / len(over), details=details)


@metric("false_end_of_turn_rate", better="lower", failure=DESCRIPTIVE, protocols=("live_call",))
def false_end_of_turn_rate(
    record: LiveCallRecord, resources: ScoringResources | None = None
) -> Score:
    """Share of the caller's within-turn pauses (between consecutive segments of one caller
    turn) the agent took for the end of the turn: it started speaking in the pause, or after
    the caller resumed but before it finished the resumed piece (its response time carried
    its onset past the resumption). Over the pauses it was silent at: a pause the agent was
    already talking through is ``overlapped`` (turn-taking scores that as the agent
    interrupting the caller) and left out."""
    if record.timeline is None:
        return Score.not_run(_NO_TIMELINE)
    pauses = caller_pauses(record.timeline)
    if not pauses:
        return Score.not_run("the caller made no pause inside a turn")
    open_pauses = [p for p in pauses if not p.agent_speaking]
    details: dict[str, Any] = {
        "pauses": len(open_pauses),
        "overlapped": len(pauses) - len(open_pauses),
        "per_pause": [
            {"turn": p.turn, "start": p.start, "length_ms": round(p.length_ms, 3),
             "agent_onset_ms": None if p.agent_onset is None else _ms(p.agent_onset - p.start),
             "onset_in_pause": p.onset_in_pause}
            for p in open_pauses
        ],
    }  # fmt: skip
    if not open_pauses:
        return Score.not_run("the agent was already speaking in every caller pause", **details)
    jumped = sum(1 for p in open_pauses if p.agent_onset is not None)
    details["false_ends"] = jumped
    return Score(value=jumped / len(open_pauses), details=details)


@metric("talk_over_ratio", better="lower", failure=DESCRIPTIVE, protocols=("live_call",))
def talk_over_ratio(record: LiveCallRecord, resources: ScoringResources | None = None) -> Score:
    """Seconds in which both parties spoke at once / seconds in which anyone spoke, floor
    speech only (backchannels are meant to overlap)."""
    if record.timeline is None:
        return Score.not_run(_NO_TIMELINE)
    caller = spans(floor_speech(record.timeline, "user"))
    agent = spans(floor_speech(record.timeline, "assistant"))
    anyone = covered_s(caller + agent)
    if anyone <= 0.0:
        return Score.not_run("nobody spoke (backchannels aside)")
    both = overlap_s(caller, agent)
    details = {
        "both_s": both,
        "anyone_s": anyone,
        "caller_s": covered_s(caller),
        "agent_s": covered_s(agent),
        "caller_backchannels": len(backchannels(record.timeline, "user")),
    }
    return Score(value=both / anyone, details=details)


@metric("false_yield_rate", better="lower", failure=DESCRIPTIVE, protocols=("live_call",))
def false_yield_rate(record: LiveCallRecord, resources: ScoringResources | None = None) -> Score:
    """Share of the agent's utterances it stopped early with no caller speech on the line
    (noise, background talk, a cough): the stop had no caller words, backchannels included,
    in the 2 s before it. Read per perturbation condition, it says how much the line alone
    cuts the agent off. Utterances the call's end cut are not stops of the agent."""
    if record.timeline is None:
        return Score.not_run(_NO_TIMELINE)
    agent = floor_speech(record.timeline, "assistant")
    if not agent:
        return Score.not_run("the agent never spoke")
    found = false_yields(record.timeline)
    details = {
        "utterances": len(agent),
        "false_yields": len(found),
        "per_stop": [
            {"start": f.start, "stop": f.stop, "after_ms": _ms(f.stop - f.start),
             "spoken_text": f.spoken_text, "intended_text": f.intended_text}
            for f in found
        ],
    }  # fmt: skip
    return Score(value=len(found) / len(agent), details=details)


@metric("agent_backchannel_rate", better=None, failure=DESCRIPTIVE, protocols=("live_call",))
def agent_backchannel_rate(
    record: LiveCallRecord, resources: ScoringResources | None = None
) -> Score:
    """The agent's own backchannels (short acknowledgements marked ``backchannel`` on its
    speech) per minute of caller floor speech, with their count and times. Descriptive:
    whether an agent should backchannel depends on the service."""
    if record.timeline is None:
        return Score.not_run(_NO_TIMELINE)
    caller_s = covered_s(spans(floor_speech(record.timeline, "user")))
    if caller_s <= 0.0:
        return Score.not_run("the caller never spoke")
    said = backchannels(record.timeline, "assistant")
    caller = spans(floor_speech(record.timeline, "user"))
    details = {
        "backchannels": len(said),
        "over_caller_speech": sum(1 for b in said if any(a < b.start < z for a, z in caller)),
        "times": [{"start": b.start, "end": b.end, "text": b.intended_text} for b in said],
        "caller_speech_s": caller_s,
    }
    return Score(value=len(said) / (caller_s / 60.0), details=details)
