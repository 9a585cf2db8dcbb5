"""User behavioural fidelity of a live call: did our simulated caller play its scenario
faithfully? A text judge looks for five ways a caller can corrupt a call (EVA-Bench's
validation check) against the scenario's goal, decision tree and the facts the caller held:

- ``extra_modifications``: the caller asked for changes its goal does not contain;
- ``premature_ending``: the caller hung up before its goal was resolved or clearly out of
  reach, or before the agent could act on what it had just said;
- ``missing_information``: the caller withheld, changed or invented a fact it was given when
  the agent asked for it;
- ``duplicate_modifications``: the caller asked again for a change the agent had already
  made;
- ``decision_tree_violation``: the caller's choices contradict its decision rules (gave up
  a must-have, accepted what it had to decline, asked for a human against its rules).

The metric is 1 when none is detected and 0 otherwise (a failure marks the call for
regeneration; it says nothing about the system under test). The prompt is ours. Caller lines
are the words the caller meant to say: an agent mishearing them is not the caller's fault."""

from __future__ import annotations

import json
from dataclasses import replace

from voxeval.json_types import JSONObject
from voxeval.scoring.call_judges.call_conversation import call_conversation
from voxeval.scoring.call_judges.judged_call import run_judge, verdict_template
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.judge_answer import as_object
from voxeval.scoring.metric import metric
from voxeval.scoring.replies.reply_record import ScoringResources
from voxeval.scoring.score import Score
from voxeval.simulation.timeline import Timeline

METRIC = "user_behavioural_fidelity"

CORRUPTION_TYPES: tuple[str, ...] = (
    "extra_modifications",
    "premature_ending",
    "missing_information",
    "duplicate_modifications",
    "decision_tree_violation",
)

SYSTEM = (
    "You check recorded phone calls in which a simulated caller, following written "
    "instructions, talks to a voice agent. You judge only the caller: whether it followed "
    "its instructions. The agent's mistakes are not your concern. Answer only with the JSON "
    "object you are asked for."
)

USER = """\
The caller was told to pursue this goal:
{goal}

Its decision rules:
Non-negotiable requirements:
{must_have}
Preferences it may give up:
{nice_to_have}
How to react to offers:
{negotiation}
Success means: {resolution}
Failure means: {failure}
Transfers to a human: {escalation}
Special situations:
{edge_cases}

Facts the caller held, to give exactly as written when the agent asks:
{information}

Its opening line was: {opening}

Tools that change records (a request that leads to one of them is a modification):
{write_tools}

The call, in time order. Caller lines are the words the caller meant to say (the agent may
have misheard them; that is not the caller's fault). TOOL lines are the agent's tool calls.
[call]
{transcript}
[/call]

The call ended because {ending}

For each corruption type decide whether the caller committed it (true) or not (false), with
one sentence of evidence quoting the caller's turn:
- extra_modifications: it asked for a change, booking or cancellation its goal does not
  include (accepting an upsell it should have declined counts here).
- premature_ending: it hung up before its goal was resolved or clearly unreachable, or in the
  same turn as giving the agent something still to act on. Only when the caller ended the
  call can this be true.
- missing_information: when asked, it withheld a fact it held, gave a different value, or
  made one up.
- duplicate_modifications: it asked again for a change the agent had already confirmed.
- decision_tree_violation: a choice contradicts its decision rules (dropped a requirement,
  accepted what it had to refuse, asked for a human against the rules).

Answer as {{"corruption": {{"<type>": {{"detected": true|false, "evidence": "..."}}, ...}}}}
with all five types."""


def _schema() -> JSONObject:
    one: JSONObject = {
        "type": "object",
        "properties": {"detected": {"type": "boolean"}, "evidence": {"type": "string"}},
        "required": ["detected", "evidence"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "corruption": {
                "type": "object",
                "properties": {name: one for name in CORRUPTION_TYPES},
                "required": list(CORRUPTION_TYPES),
                "additionalProperties": False,
            }
        },
        "required": ["corruption"],
        "additionalProperties": False,
    }


def _corruption(answer: JSONObject) -> dict[str, JSONObject]:
    """``{TYPE: {"detected": bool, "evidence": str}}`` for every corruption type."""
    found = as_object(answer["corruption"], "corruption")
    return {name: as_object(found[name], f"corruption.{name}") for name in CORRUPTION_TYPES}


def detected_types(answer: JSONObject) -> list[str]:
    """The corruption types the judge found, in the fixed order."""
    found = _corruption(answer)
    return [name for name in CORRUPTION_TYPES if found[name]["detected"]]


TEMPLATE = verdict_template(
    "user-behavioural-fidelity",
    SYSTEM,
    USER,
    _schema(),
    lambda answer: 0.0 if detected_types(answer) else 1.0,
)

ENDINGS = {
    "user_end_call": "the caller hung up (end_call).",
    "agent_end_call": "the agent hung up.",
    "agent_timeout": "the agent stopped responding to the caller's last turn.",
    "agent_error": "the agent failed during the caller's last turn.",
    "max_duration": "the call reached its time limit.",
}


def _bullets(items: list[str]) -> str:
    return "\n".join(f"- {item}" for item in items) if items else "- (none)"


def _write_tools(timeline: Timeline) -> str:
    names = sorted({tool.name for tool in timeline.tools if tool.kind == "write"})
    return ", ".join(names) if names else "(none was called)"


def prompt_variables(record: LiveCallRecord, transcript: str, end_reason: str) -> dict[str, str]:
    assert record.scenario is not None and record.timeline is not None
    goal = record.scenario.user_goal
    tree = goal.decision_tree
    info = goal.information_required
    return {
        "goal": goal.high_level_user_goal,
        "must_have": _bullets(tree.must_have_criteria),
        "nice_to_have": _bullets(tree.nice_to_have_criteria),
        "negotiation": _bullets(tree.negotiation_behavior),
        "resolution": tree.resolution_condition or "the goal is done and confirmed.",
        "failure": tree.failure_condition or "the agent cannot do what the caller needs.",
        "escalation": tree.escalation_behavior or "the caller does not ask for one.",
        "edge_cases": _bullets(tree.edge_cases),
        "information": "\n".join(f"- {k}: {json.dumps(v, default=str)}" for k, v in info.items())
        or "- (none)",
        "opening": goal.starting_utterance,
        "write_tools": _write_tools(record.timeline),
        "transcript": transcript,
        "ending": ENDINGS.get(end_reason, f"of {end_reason or 'an unknown reason'}."),
    }


def _score(rating: float, answer: JSONObject) -> Score:
    found = detected_types(answer)
    corruption = _corruption(answer)
    return Score(
        value=rating,
        passed=rating == 1.0,
        details={
            "corrupted": bool(found),
            "detected": found,
            "corruption": {
                name: {
                    "detected": bool(corruption[name]["detected"]),
                    "evidence": str(corruption[name]["evidence"]),
                }
                for name in CORRUPTION_TYPES
            },
            "validates": "simulation",
        },
    )


@metric(METRIC, better=None, failure=None, protocols=("live_call",))
def user_behavioural_fidelity(record: LiveCallRecord, resources: ScoringResources) -> Score:
    """1 when the judge finds none of the five corruption types in the caller's behaviour,
    else 0 (details per type). Validates the simulation, not the system under test."""
    judge = resources.judge()  # ProviderUnavailable -> not run with the reason
    if record.scenario is None:
        return Score.not_run("needs the call's scenario (the caller's goal and rules)")
    # Caller lines as the caller meant them, whatever the agent heard: the judged party here
    # is the caller (the transcript view of a system hearing audio itself shows just that).
    conv = call_conversation(replace(record, pipeline="speech_to_speech"))
    if conv is None or record.timeline is None:
        return Score.not_run("the call left no timeline to judge")
    end = record.timeline.end
    variables = prompt_variables(record, conv.transcript, end.reason if end else "")
    facts = {"end_reason": end.reason if end else None}
    return run_judge(judge, TEMPLATE, variables, _score, facts)
