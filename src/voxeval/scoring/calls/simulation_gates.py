"""Simulation validation gates: checks of a recorded call that decide whether the *simulation*
was sound enough to score the system under test (EVA-Bench validates its conversations the
same way before scoring, and regenerates those that fail).

Each gate returns pass, fail (with the reason), not run (with the reason: it could not run,
e.g. no judge; it never fails the call) or skipped (an earlier gate already failed, or the
system under test faulted):

- ``valid_end``: the call reached a definitive end. Valid: the caller hung up with end_call
  (``user_end_call``), the agent stopped responding or failed on the caller's turn
  (``agent_timeout``/``agent_error``: the system's fault, scored as such), or the agent hung
  up (``agent_end_call``). The reference accepts only the caller's goodbye and an agent that
  stopped responding; its agents cannot hang up. An agent hang-up is, like an agent timeout,
  an end the system under test chose: regenerating it would give the system another chance
  and, if it always hangs up, drop its failure from the mean. So it counts as a valid end.
  Invalid: ``max_duration`` (nobody concluded) and any other reason.
- ``user_behaviour``: the text judge's ``user_behavioural_fidelity`` (five corruption types).
- ``user_speech``: the caller's audio carried its key entities: the audio judge's
  ``user_speech_fidelity`` (fails when any caller turn is rated 1) decides when it ran (the
  reference's check). Otherwise the offline ``user_speech_fidelity_asr`` (fails when any
  caller turn misses an entity) decides only when ``asr_speech_gate`` is on; by default it is
  advisory and the gate is not run, because the scoring ASR's own mishearings of rare names
  and codes would fail sound calls. Both scores are kept either way.

The metric-backed gates keep the scores they computed, so the protocol stores them with the
call's scores instead of asking the judge twice."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args

from voxeval.json_types import JSONReadObject, JSONReadValue
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.user_behaviour import METRIC as BEHAVIOUR_METRIC
from voxeval.scoring.metric import METRICS
from voxeval.scoring.metric_runner import run_metric
from voxeval.scoring.replies.reply_record import ScoringResources
from voxeval.scoring.score import Score
from voxeval.simulation.simulation_config import VALIDATION_GATES

GateStatus = Literal["pass", "fail", "not_run", "skipped"]
GATES: tuple[str, ...] = VALIDATION_GATES

VALID_ENDS = {
    "user_end_call": "the caller hung up with end_call",
    "agent_timeout": "the agent stopped responding (the system's fault)",
    "agent_error": "the agent failed (the system's fault)",
    "agent_end_call": "the agent hung up",
}
INVALID_ENDS = {
    "max_duration": "the call reached simulation.max_duration_s before either side ended it",
}
SPEECH_ASR_METRIC = "user_speech_fidelity_asr"
SPEECH_JUDGE_METRIC = "user_speech_fidelity"


@dataclass(frozen=True)
class GateResult:
    gate: str
    status: GateStatus
    reason: str | None = None
    details: dict[str, JSONReadValue] = field(default_factory=dict)
    # the registered metrics the gate ran, stored with the call's scores
    scores: dict[str, Score] = field(default_factory=dict)

    def to_dict(self) -> dict[str, JSONReadValue]:
        return {
            "status": self.status,
            "reason": self.reason,
            "details": self.details,
            "metrics": {name: score.to_dict() for name, score in self.scores.items()},
        }

    @classmethod
    def from_dict(cls, gate: str, data: JSONReadObject) -> GateResult:
        """From ``validation.json``'s entry of ``gate``; a field of the wrong type is an error
        naming it."""
        status = data["status"]
        if status not in _STATUSES:
            raise ValueError(f"gate {gate}: status must be one of {_STATUSES}, not {status!r}")
        reason = data.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise ValueError(f"gate {gate}: reason must be text, not {reason!r}")
        return cls(
            gate=gate,
            status=status,
            reason=reason,
            details=dict(_mapping(data.get("details"), f"gate {gate}: details")),
            scores={
                name: Score.from_dict(_mapping(s, f"gate {gate}: metrics.{name}"))
                for name, s in _mapping(data.get("metrics"), f"gate {gate}: metrics").items()
            },
        )


_STATUSES: tuple[GateStatus, ...] = get_args(GateStatus)


def _mapping(value: JSONReadValue, where: str) -> JSONReadObject:
    """A JSON object read as one (absent or null: empty)."""
    if not value:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"{where} must be an object, not {value!r}")
    return value


def valid_end(call: JSONReadObject) -> GateResult:
    """From call.json: did the call end in a definitive state (see the module doc)?"""
    reason = str(call.get("end_reason") or "")
    if reason in VALID_ENDS:
        return GateResult("valid_end", "pass", None, {"end_reason": reason})
    why = INVALID_ENDS.get(reason, f"the call ended for an unknown reason ({reason or 'none'})")
    return GateResult("valid_end", "fail", why, {"end_reason": reason})


def _score_summary(score: Score) -> dict[str, JSONReadValue]:
    return {"value": score.value, "error": score.error, "pending": score.pending}


def user_behaviour(record: LiveCallRecord, resources: ScoringResources) -> GateResult:
    """The behaviour judge's verdict; not run (with the reason) when it could not judge."""
    score = run_metric(BEHAVIOUR_METRIC, record, resources)
    scores = {BEHAVIOUR_METRIC: score}
    if not score.ran:
        why = f"{BEHAVIOUR_METRIC}: {score.error}"
        return GateResult("user_behaviour", "not_run", why, _score_summary(score), scores)
    found = list(score.details.get("detected") or [])
    if score.value == 1.0:
        return GateResult("user_behaviour", "pass", None, {"detected": []}, scores)
    evidence = score.details.get("corruption") or {}
    reasons = "; ".join(f"{t}: {(evidence.get(t) or {}).get('evidence', '')}" for t in found)
    return GateResult(
        "user_behaviour", "fail", f"the caller's behaviour: {reasons}", {"detected": found}, scores
    )


def _speech_failure(name: str, score: Score) -> str | None:
    """Why a speech check failed, or None when it passed."""
    if score.value is not None and score.value >= 1.0:
        return None
    if name == SPEECH_ASR_METRIC:
        turns = score.details.get("turns") or []
        missed = [f"turn {t['turn']} missed {t['missed']}" for t in turns if t.get("missed")]
        return f"{name}: " + ("; ".join(missed) or "a caller turn missed an entity")
    rated = score.details.get("turns") or []
    low = [str(t.get("turn")) for t in rated if isinstance(t, Mapping) and t.get("rating") == 1]
    return f"{name}: caller turn(s) {', '.join(low) or '?'} rated 1"


ASR_ADVISORY = (
    "no audio judge ran, and the offline ASR check is advisory "
    "(simulation.validation.asr_speech_gate: false)"
)


def user_speech(
    record: LiveCallRecord, resources: ScoringResources, *, asr_decides: bool = False
) -> GateResult:
    """The caller's audio carried its entities: the audio judge decides when it ran, the
    offline ASR check only with ``asr_decides``; not run when no deciding check ran."""
    names = [SPEECH_ASR_METRIC]
    if SPEECH_JUDGE_METRIC in METRICS.names():  # the audio-judge check may not exist yet
        names.append(SPEECH_JUDGE_METRIC)
    scores = {name: run_metric(name, record, resources) for name in names}
    ran = {name: s for name, s in scores.items() if s.ran}
    details: dict[str, JSONReadValue] = {name: _score_summary(s) for name, s in scores.items()}
    if not ran:
        why = "; ".join(f"{name}: {s.error}" for name, s in scores.items())
        return GateResult("user_speech", "not_run", why, details, scores)
    # The audio judge, when it ran, decides (it is the reference's check); the ASR proxy's
    # own mishearings must not overrule the judge that listened, nor fail calls by default.
    if SPEECH_JUDGE_METRIC in ran:
        decisive = SPEECH_JUDGE_METRIC
    elif asr_decides:
        decisive = SPEECH_ASR_METRIC
    else:
        advisory = _speech_failure(SPEECH_ASR_METRIC, ran[SPEECH_ASR_METRIC])
        details["asr_check"] = advisory or "pass"
        return GateResult("user_speech", "not_run", ASR_ADVISORY, details, scores)
    details["decided_by"] = decisive
    failure = _speech_failure(decisive, ran[decisive])
    if failure:
        return GateResult("user_speech", "fail", failure, details, scores)
    return GateResult("user_speech", "pass", None, details, scores)


def run_gates(
    gates: Iterable[str],
    call: JSONReadObject,
    record: Callable[[], LiveCallRecord],
    resources: ScoringResources,
    *,
    asr_speech_gate: bool = False,
) -> dict[str, GateResult]:
    """The wanted gates in the fixed order; once the call's end is invalid the gates that
    read the conversation are skipped (a truncated call says little about the caller, and a
    judge call on it would be wasted: it is regenerated anyway). ``asr_speech_gate``: the
    offline ASR check may fail ``user_speech`` when no audio judge ran."""
    record_gates: dict[str, Callable[[LiveCallRecord, ScoringResources], GateResult]] = {
        "user_behaviour": user_behaviour,
        "user_speech": lambda rec, res: user_speech(rec, res, asr_decides=asr_speech_gate),
    }
    wanted = set(gates)
    unknown = wanted - set(GATES)
    if unknown:
        raise ValueError(f"unknown simulation gates {sorted(unknown)}; known: {list(GATES)}")
    results: dict[str, GateResult] = {}
    if "valid_end" in wanted:
        results["valid_end"] = valid_end(call)
    ended_badly = results.get("valid_end") is not None and results["valid_end"].status == "fail"
    loaded: LiveCallRecord | None = None
    for gate in GATES[1:]:
        if gate not in wanted:
            continue
        if ended_badly:
            results[gate] = GateResult(gate, "skipped", "valid_end failed")
            continue
        loaded = loaded or record()
        results[gate] = record_gates[gate](loaded, resources)
    return results


def skipped_gates(gates: Iterable[str], reason: str) -> dict[str, GateResult]:
    """Every wanted gate marked skipped with ``reason`` (e.g. the system under test faulted)."""
    return {gate: GateResult(gate, "skipped", reason) for gate in GATES if gate in set(gates)}
