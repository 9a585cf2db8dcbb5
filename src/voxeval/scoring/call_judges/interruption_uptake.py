"""Does the agent take up what the caller said when it cut in? Full-Duplex-Bench's
user-interruption task (Lin et al. 2025) rates how relevant a model's reply after a user's
interruption is to it (a 0-5 judge rating), whether the model takes the turn at all (TOR) and
how fast (latency from the end of the interruption). Here, for each caller barge-in of a live
call (a caller turn that started while the agent spoke):

* ``interruption_uptake`` (offline): the barge-in's key entities (the scenario's key facts it
  states: a corrected date of birth, a volunteered member ID) must appear in what the agent
  says or does next: the text of its next utterance after the barge-in, or the arguments of
  the tool calls it makes up to the end of that utterance. 1 when every entity is there, 0
  otherwise (an agent that never speaks again scores 0); the value is the mean over rated
  barge-ins. Barge-ins without a key entity (impatience, an urgent question without an ID)
  are not rated by it.
* ``interruption_uptake_judge``: a text judge gives each barge-in of at least
  ``MIN_JUDGED_WORDS`` words (Full-Duplex-Bench's 3-word floor: "Look, okay." is not content)
  a verdict ``took_up`` (0/1: the next reply or tool calls act on what the caller said) and
  the 0-5 relevance rating of the reference; the value is the share taken up.

Both record per barge-in whether the agent took the turn afterwards and the delay from the
end of the caller's interrupting turn to the start of the agent's reply. On a call the system
under test failed they measure the partial call (an agent that crashed after a barge-in
scores 0 for it) and are not run when it failed before any (``system_fault``). The prompt is
ours."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from voxeval.json_types import JSONObject, JSONReadValue
from voxeval.scoring.call_judges.judged_call import run_judge, share_template
from voxeval.scoring.calls.duplex_timeline import barge_ins
from voxeval.scoring.calls.floor_speech import floor_speech
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.judge import JudgeOutputError
from voxeval.scoring.judge_answer import as_int, as_objects
from voxeval.scoring.metric import DESCRIPTIVE, metric
from voxeval.scoring.replies.reply_record import ScoringResources
from voxeval.scoring.score import Score
from voxeval.scoring.text.spoken_entities import entity_spoken, known_entities_in
from voxeval.simulation.timeline import SpeakerSegment, Timeline, ToolEvent

MIN_JUDGED_WORDS = 3
_NO_TIMELINE = "no event timeline for this call"


@dataclass(frozen=True)
class Interruption:
    """A caller turn that started while the agent spoke, and what the agent did next."""

    index: int
    start: float
    end: float
    text: str  # what the caller said in that turn (every piece)
    cut_text: str  # the agent utterance it cut into
    reply: SpeakerSegment | None  # the agent's next utterance after the barge-in
    tools: tuple[ToolEvent, ...]  # tool calls from the barge-in to the end of that reply

    @property
    def reply_text(self) -> str:
        return "" if self.reply is None else self.reply.intended_text

    def acted_text(self) -> str:
        """What the agent said and did next, as text (reply, then each call's arguments)."""
        calls = [" ".join(_leaves(t.arguments)) for t in self.tools]
        return " ".join([self.reply_text, *calls])

    def timing(self) -> dict[str, bool | float | None]:
        took = self.reply is not None and bool(self.reply.intended_text.strip())
        latency = None if self.reply is None else round(self.reply.start - self.end, 3)
        return {"took_turn": took, "latency_s": latency}


def interruptions(timeline: Timeline) -> list[Interruption]:
    """Every caller barge-in with the agent's next utterance and tool calls."""
    agent = floor_speech(timeline, "assistant")
    caller = floor_speech(timeline, "user")
    found: list[Interruption] = []
    for n, barge in enumerate(barge_ins(timeline)):
        pieces = [s for s in caller if s.turn == barge.turn and s.start >= barge.start]
        end = max((s.end for s in pieces), default=barge.start)
        cut = next((a for a in agent if a.start == barge.agent_start), None)
        reply = next((a for a in agent if a.start > barge.start), None)
        until = reply.end if reply is not None else float("inf")
        tools = tuple(t for t in timeline.tools if barge.start <= t.t <= until)
        found.append(
            Interruption(
                index=n,
                start=barge.start,
                end=end,
                text=" ".join(s.intended_text.strip() for s in pieces).strip(),
                cut_text="" if cut is None else cut.intended_text,
                reply=reply,
                tools=tools,
            )
        )
    return found


def _leaves(value: JSONReadValue) -> list[str]:
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    if isinstance(value, list | tuple):
        return [leaf for item in value for leaf in _leaves(item)]
    return [] if value is None else [str(value)]


@metric("interruption_uptake", better="higher", failure=DESCRIPTIVE, protocols=("live_call",))
def interruption_uptake(record: LiveCallRecord, resources: ScoringResources | None = None) -> Score:
    """Share of the caller's barge-ins carrying key entities whose entities all appear in the
    agent's next utterance or the tool calls made up to its end (module docstring)."""
    if record.timeline is None or record.scenario is None:
        return Score.not_run("needs the call timeline and its scenario")
    found = interruptions(record.timeline)
    if not found:
        return Score.not_run("the caller never cut into the agent")
    known = record.scenario.entities
    language = record.scenario.language
    rated: list[dict[str, Any]] = []
    for item in found:
        entities = known_entities_in(item.text, known)
        if not entities:
            continue
        acted = item.acted_text()
        missed = [e for e in entities if not entity_spoken(e, acted, language)]
        rated.append(
            {
                "interruption": item.index,
                "text": item.text,
                "entities": entities,
                "missed": missed,
                "took_up": int(not missed),
                "reply": item.reply_text,
                "tool_calls": [t.name for t in item.tools],
                **item.timing(),
            }
        )
    if not rated:
        return Score.not_run(
            f"none of the caller's {len(found)} barge-ins stated a key entity", barge_ins=len(found)
        )
    value = sum(r["took_up"] for r in rated) / len(rated)
    details = {
        "rated": len(rated),
        "barge_ins": len(found),
        "interruptions": rated,
        "failed": [r["interruption"] for r in rated if not r["took_up"]],
        "method": "key_entity",
    }
    return Score(value=value, passed=value == 1.0, details=details)


SCHEMA: JSONObject = {
    "type": "object",
    "properties": {
        "interruptions": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "interruption": {"type": "integer"},
                    "took_up": {"type": "integer", "enum": [0, 1]},
                    "relevance": {"type": "integer", "minimum": 0, "maximum": 5},
                    "reason": {"type": "string"},
                },
                "required": ["interruption", "took_up", "relevance", "reason"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["interruptions"],
    "additionalProperties": False,
}

SYSTEM = (
    "You review phone calls between a caller and a voice agent. Answer only with the JSON "
    "object you are asked for."
)

USER = """\
In each case below the caller cut in while the agent was talking. You see what the agent was
saying when it was cut off, what the caller said, and what the agent said and did next (its
next utterance and the tool calls it made before or while saying it).

{cases}

For each case decide:
- took_up: 1 if the agent's next utterance or tool calls act on what the caller said when it
  cut in (uses a corrected or newly given detail, answers the question, changes course as
  asked), 0 if the agent carries on as if it had not been said, uses a detail the caller has
  just corrected, or never speaks again;
- relevance: 0-5, how related the agent's next response is to the caller's interruption (0
  unrelated, 5 fully related);
- reason: one sentence.
Answer as {{"interruptions": [{{"interruption": N, "took_up": 0 or 1, "relevance": 0-5,
"reason": "..."}}, ...]}} with one entry per case, using the case numbers shown."""

TEMPLATE = share_template("interruption-uptake", SYSTEM, USER, SCHEMA)


def _case(item: Interruption) -> str:
    calls = [
        f"{t.name}({json.dumps(t.arguments, sort_keys=True, default=str)})" for t in item.tools
    ]
    return "\n".join(
        [
            f"[case {item.index}]",
            f"agent, cut off: {item.cut_text.strip() or '(nothing)'}",
            f"caller cut in: {item.text}",
            f"agent next said: {item.reply_text.strip() or '(nothing: it never spoke again)'}",
            f"agent tool calls: {'; '.join(calls) if calls else '(none)'}",
        ]
    )


def _items(answer: JSONObject, expected: list[int]) -> dict[int, JSONObject]:
    cases = as_objects(answer.get("interruptions", []), "interruptions")
    items = {as_int(i["interruption"], "interruption"): i for i in cases}
    missing = [n for n in expected if n not in items]
    if missing:
        raise JudgeOutputError(f"no verdict for cases {missing}")
    return items


def _rate(answer: JSONObject, expected: list[int]) -> float:
    items = _items(answer, expected)
    return sum(as_int(items[n]["took_up"], "took_up") for n in expected) / len(expected)


def _score(
    judged: list[Interruption], expected: list[int], value: float, answer: JSONObject
) -> Score:
    items = _items(answer, expected)
    relevance = {i.index: as_int(items[i.index]["relevance"], "relevance") for i in judged}
    per: list[dict[str, JSONReadValue]] = [
        {
            "interruption": item.index,
            "text": item.text,
            "took_up": as_int(items[item.index]["took_up"], "took_up"),
            "relevance": relevance[item.index],
            "reason": str(items[item.index]["reason"]),
            **item.timing(),
        }
        for item in judged
    ]
    details = {
        "interruptions": per,
        "mean_relevance": sum(relevance.values()) / len(per),
        "failed": [p["interruption"] for p in per if not p["took_up"]],
        "rated": len(per),
    }
    return Score(value=value, passed=value == 1.0, details=details)


@metric("interruption_uptake_judge", better="higher", failure=DESCRIPTIVE, protocols=("live_call",))
def interruption_uptake_judge(record: LiveCallRecord, resources: ScoringResources) -> Score:
    """Share of the caller's barge-ins (of 3 words or more) that a judge finds the agent took
    up in its next utterance or tool calls (module docstring)."""
    judge = resources.judge()  # ProviderUnavailable -> not run with the reason
    if record.timeline is None:
        return Score.not_run(_NO_TIMELINE)
    found = interruptions(record.timeline)
    judged = [i for i in found if len(i.text.split()) >= MIN_JUDGED_WORDS]
    if not judged:
        reason = "the caller never cut into the agent" if not found else "no barge-in had words"
        return Score.not_run(f"{reason} (of {MIN_JUDGED_WORDS}+ words)", barge_ins=len(found))
    expected = [i.index for i in judged]
    template = replace(TEMPLATE, rate=partial(_rate, expected=expected))
    cases = "\n\n".join(_case(i) for i in judged)
    facts = {"barge_ins": len(found), "judged_interruptions": len(judged)}
    return run_judge(judge, template, {"cases": cases}, partial(_score, judged, expected), facts)
