"""Conciseness of a live call's agent turns (EVA-X). A text judge rates every agent turn 1-3
(3 concise, 2 somewhat long, 1 far too long for the ear) with failure tags; the call's score
is the mean of the normalised turn ratings ((r - 1) / 2); a call passes at >= 0.5.
The prompt is ours."""

from __future__ import annotations

from voxeval.json_types import JSONObject
from voxeval.scoring.call_judges.judged_agent_turns import judge_agent_turns, turn_field_rater
from voxeval.scoring.call_judges.judged_call import (
    rating_property,
    share_template,
    turn_items,
    turns_schema,
)
from voxeval.scoring.call_judges.judged_ratings import RATING_MAX, mean_normalised, passes
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.judge_answer import as_int, as_list
from voxeval.scoring.metric import FailureValue, metric
from voxeval.scoring.replies.reply_record import ScoringResources
from voxeval.scoring.score import Score

FAILURE_TAGS: tuple[str, ...] = (
    "verbosity_or_filler",
    "excess_information_density",
    "over_enumeration",
    "disproportionate_detail",
)

SCHEMA = turns_schema(
    {
        "rating": rating_property(),
        "failure_tags": {"type": "array", "items": {"type": "string", "enum": list(FAILURE_TAGS)}},
    }
)

SYSTEM = (
    "You review what a voice agent said on recorded phone calls. The caller hears every word "
    "once and cannot scroll back, so length costs attention. Answer only with the JSON object "
    "you are asked for."
)

USER = """\
The call, in time order, for context:
[call]
{transcript}
[/call]

Rate each of these agent turns:
{agent_turns}

3 = says what the moment needs and no more; 2 = noticeably longer than needed, but easy to
follow; 1 = so long or dense that a listener would lose track.
Tag every turn rated below 3 with what was wrong (one or more of):
- verbosity_or_filler: padding, pleasantries or restating that adds nothing;
- excess_information_density: too many facts, numbers or options in one breath;
- over_enumeration: reading out a list the caller did not need in full;
- disproportionate_detail: detail far beyond what the caller asked.
A turn rated 3 has no tags. Answer as
{{"turns": [{{"turn": N, "rating": 1-3, "failure_tags": [...]}}, ...]}} with one entry per
agent turn listed above, using the turn numbers shown."""

TEMPLATE = share_template("eva-conciseness", SYSTEM, USER, SCHEMA)


_rate = turn_field_rater("rating", mean_normalised)


def _score(expected: list[int], value: float, answer: JSONObject) -> Score:
    items = turn_items(answer, expected)
    ratings = {t: as_int(items[t]["rating"], "rating") for t in expected}
    # a top rating carries no failure (the judge sometimes tags it anyway): dropped
    tags = {
        t: [] if ratings[t] == RATING_MAX else as_list(items[t]["failure_tags"], "failure_tags")
        for t in expected
    }
    counts = {tag: sum(tag in found for found in tags.values()) for tag in FAILURE_TAGS}
    return Score(
        value=value,
        passed=passes(value),
        details={
            "turn_ratings": {str(t): r for t, r in ratings.items()},
            "failure_tags": {str(t): found for t, found in tags.items() if found},
            "tag_counts": counts,
        },
    )


@metric(
    "conciseness",
    better="higher",
    failure=FailureValue(0.0, False, "the lowest conciseness rating on every turn"),
    protocols=("live_call",),
)
def conciseness(record: LiveCallRecord, resources: ScoringResources) -> Score:
    judge = resources.judge()  # ProviderUnavailable -> not run with the reason
    return judge_agent_turns(
        record,
        judge,
        TEMPLATE,
        _rate,
        _score,
        lambda conv: {"transcript": conv.transcript, "agent_turns": conv.agent_turns_text()},
        "the agent said nothing: no turn to rate",
    )
