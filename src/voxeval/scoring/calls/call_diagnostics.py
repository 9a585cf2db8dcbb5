"""Diagnostic metrics of a live call (not part of the EVA-A/EVA-X composites): they say *why*
a call failed — authentication, latency, what the agent's ASR heard, tool-call formatting,
key entities, how the call ended, fallback nudges and speech before tool calls."""

from __future__ import annotations

from statistics import mean
from typing import Any

import jiwer

from voxeval.benchmarks.entity_forms import entity_key, entity_variants
from voxeval.benchmarks.tools.db_compare import SESSION_KEY, session_check
from voxeval.json_types import JSONReadValue
from voxeval.scoring.calls.call_turns import GREETING_TURN, number_turns
from voxeval.scoring.calls.floor_speech import floor_speech, turn_texts
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.metric import DESCRIPTIVE, FailureValue, metric
from voxeval.scoring.replies.reply_record import ScoringResources
from voxeval.scoring.score import Score
from voxeval.scoring.text.text_normaliser import normaliser_for

CLEAN_ENDS = ("user_end_call", "agent_end_call")


@metric(
    "authentication_success",
    better="higher",
    failure=FailureValue(0.0, False, "the caller was not authenticated"),
    protocols=("live_call",),
)
def authentication_success(
    record: LiveCallRecord, resources: ScoringResources | None = None
) -> Score:
    """1 if the caller ended up authenticated as the scenario expects: every expected session
    key holds its value (strings case-insensitive; an expected null matches an absent key).
    A scenario that expects no session has nothing to check: not run (as in EVA-Bench)."""
    if record.expected_db is None or record.final_db is None:
        return Score.not_run("needs the expected and the final database")
    expected = record.expected_db.get(SESSION_KEY) or {}
    actual = record.final_db.get(SESSION_KEY) or {}
    if not expected:
        return Score.not_run("the scenario expects no authenticated session", actual=actual)
    check = session_check(expected, actual)
    details = {"expected": expected, "actual": actual, "mismatched": check["mismatched"]}
    return Score(value=float(check["ok"]), passed=check["ok"], details=details)


@metric("response_latency", better=None, failure=DESCRIPTIVE, protocols=("live_call",))
def response_latency(record: LiveCallRecord, resources: ScoringResources | None = None) -> Score:
    """Mean agent response latency in seconds (agent onset - end of the caller's speech) over
    the turns both sides spoke in (turns numbered as turn-taking numbers them), also split by
    whether the turn involved a tool call.

    A turn whose first agent speech started before the caller's speech of that turn ended (the
    agent talked over the rest of the turn) has no response latency: it is counted in
    ``early_starts`` with how early it started (``early_by_s``), never averaged in as a
    negative latency. When every answered turn was an early start there is no latency to
    report and the metric is not run.
    """
    if record.timeline is None:
        return Score.not_run("no event timeline for this call")
    turns = number_turns(record.timeline)
    # (turn, agent onset - end of the caller's speech in seconds) of every answered turn
    started = [(t, turns.latency_s(t)) for t in turns.answered()]
    after_user = [(t, s) for t, s in started if s >= 0.0]
    early_by_s = [-s for _, s in started if s < 0.0]
    counts: dict[str, JSONReadValue] = {
        "answered_turns": len(after_user),
        "early_starts": len(early_by_s),
        "early_by_s": early_by_s,
        "unanswered_turns": len(turns.user.keys() - turns.agent.keys()),
    }
    if not started:
        return Score.not_run("no user turn was answered by the agent", **counts)
    if not after_user:
        return Score.not_run(
            f"the agent started all {len(early_by_s)} answers before the user finished", **counts
        )
    seconds = [s for _, s in after_user]
    with_tool = [s for t, s in after_user if t in turns.tool_turns]
    without = [s for t, s in after_user if t not in turns.tool_turns]
    details = {
        "mean_s": mean(seconds),
        "mean_with_tool_s": mean(with_tool) if with_tool else None,
        "mean_without_tool_s": mean(without) if without else None,
        "n_with_tool": len(with_tool),
        "n_without_tool": len(without),
        "per_turn_s": seconds,
        **counts,
    }
    return Score(value=mean(seconds), details=details)


@metric("fallback_nudge_rate", better="lower", failure=DESCRIPTIVE, protocols=("live_call",))
def fallback_nudge_rate(record: LiveCallRecord, resources: ScoringResources | None = None) -> Score:
    """Share of the agent's turns after the greeting in which it spoke a fallback nudge (a
    reprompt such as "are you still there?" said because it detected no caller turn, marked
    ``nudge`` on the speech segment) - a sign its turn detection dropped the caller's speech.
    Lower is better."""
    if record.timeline is None:
        return Score.not_run("no event timeline for this call")
    turns = number_turns(record.timeline)
    agent_turns = [t for t in turns.agent if t != GREETING_TURN]
    if not agent_turns:
        return Score.not_run("the agent spoke no turn after its greeting")
    nudged = sorted(t for t in agent_turns if t in turns.nudge_turns)
    details = {"agent_turns": len(agent_turns), "nudge_turns": nudged}
    return Score(value=len(nudged) / len(agent_turns), details=details)


@metric("pre_tool_speech_rate", better=None, failure=DESCRIPTIVE, protocols=("live_call",))
def pre_tool_speech_rate(
    record: LiveCallRecord, resources: ScoringResources | None = None
) -> Score:
    """Share of the turns with a tool call in which the agent spoke before its first tool call
    of the turn (e.g. "let me look that up"). Descriptive: whether speaking first is better
    depends on how long the tools take."""
    if record.timeline is None:
        return Score.not_run("no event timeline for this call")
    turns = number_turns(record.timeline)
    tool_turns = sorted(turns.tool_turns)
    if not tool_turns:
        return Score.not_run("the agent made no tool calls")
    spoke_first = [
        t
        for t in tool_turns
        if any(start < turns.first_tool_t[t] for start, _ in turns.agent.get(t, []))
    ]
    details = {"tool_turns": tool_turns, "pre_tool_speech_turns": spoke_first}
    return Score(value=len(spoke_first) / len(tool_turns), details=details)


@metric(
    "stt_wer",
    better="lower",
    failure=FailureValue(1.0, None, "every word the caller said missed"),
    protocols=("live_call",),
)
def stt_wer(record: LiveCallRecord, resources: ScoringResources | None = None) -> Score:
    """Word error rate of what the agent heard (user segments' ``transcript``) against what the
    caller said (``intended_text``), Whisper-style normalised for the call's language (the
    English normaliser for English, the basic one otherwise), pooled over the call. The
    caller's backchannels ("mm-hm" while the agent talks) are left out: an agent need not
    transcribe them."""
    if record.timeline is None:
        return Score.not_run("no event timeline for this call")
    agent_starts = [s.start for s in floor_speech(record.timeline, "assistant")]
    normalise = normaliser_for(record.scenario.language if record.scenario else None)
    # A user segment with no transcript that the agent never answered (e.g. the caller's goodbye
    # as it hangs up) was never processed by the agent's ASR: it is not a deletion error.
    # per caller turn: a turn said in pieces (pauses) is one transcript on the agent's side
    pairs = [
        (normalise(t.said), normalise(t.transcript))
        for t in turn_texts(record.timeline, "user")
        if t.said and (t.transcript or any(a >= t.end for a in agent_starts))
    ]
    pairs = [(ref, hyp) for ref, hyp in pairs if ref]
    if not pairs:
        return Score.not_run("no user speech with intended text")
    if not any(hyp for _, hyp in pairs):
        return Score.not_run(
            "the agent exposed no transcript of the user (e.g. speech-to-speech)",
            not_applicable=True,
        )
    output = jiwer.process_words([r for r, _ in pairs], [h for _, h in pairs])
    details = {
        "errors": output.substitutions + output.deletions + output.insertions,
        "ref_words": sum(len(r.split()) for r, _ in pairs),
        "substitutions": output.substitutions,
        "deletions": output.deletions,
        "insertions": output.insertions,
        "segments": len(pairs),
    }
    return Score(value=float(output.wer), details=details)


@metric(
    "tool_call_validity",
    better="higher",
    failure=FailureValue(0.0, False, "no valid tool call"),
    protocols=("live_call",),
)
def tool_call_validity(record: LiveCallRecord, resources: ScoringResources | None = None) -> Score:
    """Share of the agent's tool calls whose arguments validated against the tool's schema.
    Calls whose argument types were converted (``tool_arguments: coerce``, as the EVA-Bench
    reference's tools convert them) count as valid and are listed under ``coerced``."""
    if record.timeline is None:
        return Score.not_run("no event timeline for this call")
    calls = record.timeline.tools
    if not calls:
        return Score.not_run("the agent made no tool calls")
    invalid = [{"name": t.name, "error": t.error} for t in calls if not t.valid]
    coerced = [
        {"name": t.name, "mismatches": list(t.argument_mismatches)}
        for t in calls
        if t.argument_mismatches
    ]
    value = 1.0 - len(invalid) / len(calls)
    details: dict[str, Any] = {"calls": len(calls), "invalid": invalid}
    if coerced:
        details["coerced"] = coerced
    return Score(value=value, passed=not invalid, details=details)


@metric(
    "key_entity_accuracy",
    better="higher",
    failure=FailureValue(0.0, None, "no key entity heard correctly"),
    protocols=("live_call",),
)
def key_entity_accuracy(record: LiveCallRecord, resources: ScoringResources | None = None) -> Score:
    """Of the key entities (the scenario's information fields) the caller actually spoke, the
    share the agent's transcript of that same turn contains exactly (after normalisation)."""
    if record.timeline is None or record.scenario is None:
        return Score.not_run("needs the call timeline and its scenario")
    entities = record.scenario.entities
    if not entities:
        return Score.not_run("the scenario lists no key entities")
    # per caller turn (its pieces joined), on the words that went out: an entity the caller
    # was cut off before saying was never on the line
    turns = [t for t in turn_texts(record.timeline, "user") if t.said]
    if not any(t.transcript for t in turns):
        return Score.not_run(
            "the agent exposed no transcript of the user (e.g. speech-to-speech)",
            not_applicable=True,
        )
    checks: list[dict[str, Any]] = []
    for label, value in entities.items():
        variants = entity_variants(value)
        for t in turns:
            said = entity_key(t.said)
            if not any(v and v in said for v in variants):
                continue
            heard = entity_key(t.transcript)
            checks.append(
                {"entity": label, "value": value, "turn": t.turn,
                 "correct": any(v and v in heard for v in variants), "heard": t.transcript}
            )  # fmt: skip
    if not checks:
        return Score.not_run("the caller never spoke a key entity in a recognisable form")
    correct = sum(1 for c in checks if c["correct"])
    return Score(value=correct / len(checks), details={"mentions": checks})


@metric(
    "conversation_finished",
    better="higher",
    failure=FailureValue(0.0, False, "the call did not end by a hang-up"),
    protocols=("live_call",),
)
def conversation_finished(
    record: LiveCallRecord, resources: ScoringResources | None = None
) -> Score:
    """1 if the call ended by a hang-up (caller's ``end_call`` or the agent's), 0 if it ended
    by agent timeout, the duration limit or an error."""
    if record.timeline is None or record.timeline.end is None:
        return Score.not_run("the timeline has no end event")
    reason = record.timeline.end.reason
    ok = reason in CLEAN_ENDS
    return Score(value=float(ok), passed=ok, details={"end_reason": reason})
