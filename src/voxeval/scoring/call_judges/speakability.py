"""Speakability of the agent's text (EVA diagnostic): would each agent turn sound natural
when read out by a voice? A text judge gives every agent turn a binary verdict, as the
reference does (1 speakable, 0 not: markup, tables, links, symbols or unreadable
abbreviations and number formats). The score is the share of speakable turns; it is a
diagnostic with no pass threshold.

It grades the text a cascade or hybrid agent handed to its voice; a speech-to-speech system
produces audio with no separate text to grade, so it is not run there. The prompt is ours."""

from __future__ import annotations

from voxeval.json_types import JSONObject
from voxeval.scoring.call_judges.judged_agent_turns import judge_agent_turns, turn_field_rater
from voxeval.scoring.call_judges.judged_call import share_template, turn_items, turns_schema
from voxeval.scoring.call_judges.judged_ratings import binary_share
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.judge_answer import as_int
from voxeval.scoring.metric import DESCRIPTIVE, metric
from voxeval.scoring.replies.reply_record import ScoringResources
from voxeval.scoring.score import Score

SCHEMA = turns_schema(
    {"speakable": {"type": "integer", "enum": [0, 1]}, "reason": {"type": "string"}}
)

SYSTEM = (
    "You check text that a voice agent sends to a speech synthesiser. Answer only with the "
    "JSON object you are asked for."
)

USER = """\
Each block below is one turn of text that was read aloud to a caller:
{agent_turns}

For each turn answer speakable = 1 if a speech synthesiser can read it so that it sounds
natural, or 0 if it contains things that do not work by ear: markdown or other formatting,
tables, bullet layouts, URLs, emoji, symbols read literally, abbreviations or codes a
listener cannot follow, or numbers, dates and prices written in a way a voice would misread.
Judge only how the text sounds, not whether it is correct or helpful. Answer as
{{"turns": [{{"turn": N, "speakable": 0 or 1, "reason": "..."}}, ...]}} with one entry per
turn listed above, using the turn numbers shown."""

TEMPLATE = share_template("eva-speakability", SYSTEM, USER, SCHEMA)


_rate = turn_field_rater("speakable", binary_share)


def _score(expected: list[int], value: float, answer: JSONObject) -> Score:
    items = turn_items(answer, expected)
    verdicts = {str(t): as_int(items[t]["speakable"], "speakable") for t in expected}
    reasons = {str(t): str(items[t]["reason"]) for t in expected if not verdicts[str(t)]}
    return Score(value=value, details={"turn_verdicts": verdicts, "unspeakable": reasons})


@metric(
    "speakability",
    better="higher",
    failure=DESCRIPTIVE,  # a failed call says nothing about how its text reads
    protocols=("live_call",),
)
def speakability(record: LiveCallRecord, resources: ScoringResources) -> Score:
    if record.pipeline == "speech_to_speech":
        return Score.not_run("a speech-to-speech system speaks no separate text to grade")
    judge = resources.judge()  # ProviderUnavailable -> not run with the reason
    return judge_agent_turns(
        record,
        judge,
        TEMPLATE,
        _rate,
        _score,
        lambda conv: {"agent_turns": conv.agent_turns_text()},
        "the agent said nothing: no text to grade",
    )
