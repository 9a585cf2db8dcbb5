"""Faithfulness of a live call (EVA-A): did the agent stay true to what the caller said, what
its tools returned and the policy it was given? Five dimensions rated 1-3 by a text judge;
the call's rating is the worst of them, normalised to (r - 1) / 2; a call passes at >= 0.5.

The prompt is ours. It is pipeline-aware: a cascade is judged against its own transcript of
the caller, a system that hears the audio itself against what the caller meant to say, so
that mishearing counts against it unless it asked the caller to confirm."""

from __future__ import annotations

from voxeval.json_types import JSONObject
from voxeval.scoring.call_judges.call_conversation import CallConversation
from voxeval.scoring.call_judges.judged_agent_turns import judge_conversation
from voxeval.scoring.call_judges.judged_call import (
    dimensions_score,
    dimensions_template,
)
from voxeval.scoring.call_judges.judged_ratings import faithfulness_rating
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.metric import FailureValue, metric
from voxeval.scoring.replies.reply_record import ScoringResources
from voxeval.scoring.score import Score

DIMENSIONS: tuple[str, ...] = (
    "fabricated_tool_parameters",
    "misrepresented_tool_results",
    "policy_violations",
    "failure_to_disambiguate",
    "hallucination",
)

SYSTEM = (
    "You audit recorded phone calls between a caller and a voice agent that uses tools. You "
    "check whether the agent stayed faithful to the facts it had. Answer only with the JSON "
    "object you are asked for."
)

USER = """\
The agent's role: {role}
Date and time of the call: {current_date_time}

The agent's policy (instructions it had to follow):
[policy]
{policy}
[/policy]

Tools the agent could use: {tools}

{caller_note}

The call, in time order (TOOL lines are the agent's tool calls with what they returned):
[call]
{transcript}
[/call]

Rate each dimension 3 (no problem), 2 (a minor slip with little consequence) or 1 (a clear
problem that misleads the caller or changes what gets done):
- fabricated_tool_parameters: tool arguments the caller never gave and no earlier tool
  returned (invented ids, names, dates, amounts).
- misrepresented_tool_results: the agent told the caller something other than what a tool
  returned, or claimed an action succeeded when the tool said it did not.
- policy_violations: the agent skipped a step its policy requires, or did something the
  policy forbids.
- failure_to_disambiguate: {disambiguation_note}
- hallucination: facts, offers or promises that come from neither the caller, the tools nor
  the policy.

For each dimension give the rating and one sentence of evidence (quote the turn). Answer as
{{"dimensions": {{"<dimension>": {{"rating": 1-3, "evidence": "..."}}, ...}}}} with all five."""

CASCADE_CALLER_NOTE = (
    "Caller lines are the agent's own speech-to-text transcript: that is all the agent "
    "received. Judge the agent against that transcript, not against what the caller may "
    "really have said."
)
AUDIO_CALLER_NOTE = (
    "This agent hears the caller's audio itself. Caller lines are the words the caller meant "
    "to say. If the agent misheard them and acted on or repeated the wrong value, that is a "
    "faithfulness problem of the agent, unless it asked the caller to confirm first."
)
CASCADE_DISAMBIGUATION = (
    "the agent acted on an unclear or possibly mis-transcribed request (names, codes, "
    "amounts) without confirming it, especially before a change that cannot be undone or "
    "after a lookup that failed."
)
AUDIO_DISAMBIGUATION = (
    "the agent acted on a value it may have misheard (spelled codes, names, numbers) without "
    "reading it back or asking, especially before a change that cannot be undone or after a "
    "lookup that failed. Hearing audio directly, it should expect mishearings."
)

TEMPLATE = dimensions_template("eva-faithfulness", SYSTEM, USER, DIMENSIONS, faithfulness_rating)


def prompt_variables(conv: CallConversation) -> dict[str, str]:
    audio = conv.hears_audio
    return {
        "role": conv.role or "(not given)",
        "current_date_time": conv.current_date_time or "(not given)",
        "policy": conv.policy,
        "tools": conv.tools,
        "transcript": conv.transcript,
        "caller_note": AUDIO_CALLER_NOTE if audio else CASCADE_CALLER_NOTE,
        "disambiguation_note": AUDIO_DISAMBIGUATION if audio else CASCADE_DISAMBIGUATION,
    }


def _refusal(conv: CallConversation) -> str | None:
    if not conv.policy:
        return "the scenario gives no agent policy to judge faithfulness against"
    return None


def _score(rating: float, answer: JSONObject) -> Score:
    return dimensions_score(rating, answer)


@metric(
    "faithfulness",
    better="higher",
    failure=FailureValue(0.0, False, "the lowest faithfulness rating"),
    protocols=("live_call",),
)
def faithfulness(record: LiveCallRecord, resources: ScoringResources) -> Score:
    judge = resources.judge()  # ProviderUnavailable -> not run with the reason
    return judge_conversation(record, judge, TEMPLATE, _score, prompt_variables, _refusal)
