"""Conversation progression of a live call (EVA-X): did the agent move the call forward?
Four dimensions rated 1-3 by a text judge; the call's rating is 3 when none is flagged, 2
when one or two are flagged at 2, 1 when any is rated 1 or three or more are flagged
(``judged_ratings.progression_rating``); normalised (r - 1) / 2; a call passes at >= 0.5.
The prompt is ours."""

from __future__ import annotations

from voxeval.json_types import JSONObject
from voxeval.scoring.call_judges.call_conversation import CallConversation
from voxeval.scoring.call_judges.judged_agent_turns import judge_conversation
from voxeval.scoring.call_judges.judged_call import (
    dimensions_score,
    dimensions_template,
)
from voxeval.scoring.call_judges.judged_ratings import progression_rating
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.metric import FailureValue, metric
from voxeval.scoring.replies.reply_record import ScoringResources
from voxeval.scoring.score import Score

DIMENSIONS: tuple[str, ...] = (
    "unnecessary_tool_calls",
    "information_loss",
    "redundant_statements",
    "question_quality",
)

SYSTEM = (
    "You review recorded phone calls between a caller and a voice agent that uses tools, "
    "for how efficiently the agent moved the call towards the caller's goal. Answer only "
    "with the JSON object you are asked for."
)

USER = """\
The agent's policy:
[policy]
{policy}
[/policy]

The call, in time order (TOOL lines are the agent's tool calls with what they returned):
[call]
{transcript}
[/call]

Rate each dimension 3 (no problem), 2 (happened, but cost little) or 1 (clearly slowed the
call down or made the caller repeat work):
- unnecessary_tool_calls: tool calls that repeat an earlier call with the same arguments,
  fetch something already known, or serve no purpose in the caller's request.
- information_loss: the agent asked again for something the caller already gave, or lost
  track of facts established earlier in the call.
- redundant_statements: the agent repeated the same information or confirmation without
  the caller asking for it.
- question_quality: the agent's questions were unclear, asked for several unrelated things at
  once, or did not lead towards resolving the request.

Correctness is judged elsewhere: rate only progression. For each dimension give the rating
and one sentence of evidence. Answer as
{{"dimensions": {{"<dimension>": {{"rating": 1-3, "evidence": "..."}}, ...}}}} with all four."""

TEMPLATE = dimensions_template(
    "eva-conversation-progression", SYSTEM, USER, DIMENSIONS, progression_rating
)


def _variables(conv: CallConversation) -> dict[str, str]:
    return {"policy": conv.policy or "(not given)", "transcript": conv.transcript}


def _refusal(conv: CallConversation) -> str | None:
    if not conv.agent_turns:
        return "the agent said nothing: there is no progression to judge"
    return None


def _score(rating: float, answer: JSONObject) -> Score:
    return dimensions_score(rating, answer, list_flagged=True)


@metric(
    "conversation_progression",
    better="higher",
    failure=FailureValue(0.0, False, "the lowest progression rating"),
    protocols=("live_call",),
)
def conversation_progression(record: LiveCallRecord, resources: ScoringResources) -> Score:
    judge = resources.judge()  # ProviderUnavailable -> not run with the reason
    return judge_conversation(record, judge, TEMPLATE, _score, _variables, _refusal)
