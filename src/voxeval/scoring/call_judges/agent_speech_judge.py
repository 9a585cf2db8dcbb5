"""Agent speech fidelity rated by an audio-capable judge (EVA-A): did the agent's audio say
what it had to say? One judge call per agent turn, with that turn's audio cut from the
recorded ``assistant`` track and a prompt about that turn only; the judge answers a binary
verdict (1 faithful, 0 not) with a transcript and evidence, as JSON checked against a schema.

Two variants, chosen by the system's pipeline (the prompts are ours):

- ``intended_text`` (cascade, hybrid, and systems of unknown kind, which hand a text to a
  voice): does the audio say the text the agent meant to speak (``intended_text`` on the
  timeline), with every key entity exact (codes, IDs, names, dates, amounts)?
- ``entities`` (speech-to-speech, which has no text of its intent): the judge gets the
  entities the caller said and the tools returned so far (``entity_sources``) and checks that
  any of them the turn speaks is articulated exactly. A turn that speaks none is not rated;
  a turn before any entity was given is not sent to the judge.

Turns the caller cut short are not rated (their audio never held the whole text), nor turns
with no intended text (intended-text variant). The value is the mean verdict over rated
turns; pass >= 0.95 (EVA-Bench). This is the judge's metric; the offline ASR check
``agent_speech_fidelity_asr`` is a different metric (``details["method"]`` says which)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Literal

from voxeval.audio import Audio
from voxeval.json_types import JSONObject
from voxeval.scoring.call_judges.judged_call import number_field, verdict_template
from voxeval.scoring.call_judges.turn_judging import TurnRequest, audio_judge_of, judge_each_turn
from voxeval.scoring.calls.entity_sources import SourcedEntity, entities_given_by
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.speech_fidelity import AGENT_PASS, SpokenTurn, spoken_turns, turn_audio
from voxeval.scoring.judge_answer import as_int
from voxeval.scoring.metric import FailureValue, metric
from voxeval.scoring.replies.reply_record import ScoringResources
from voxeval.scoring.score import Score
from voxeval.scoring.text.spoken_entities import extract_entities
from voxeval.simulation.timeline import Timeline

METHOD = "audio_judge"
Variant = Literal["intended_text", "entities"]

_VERDICT: JSONObject = {"type": "integer", "enum": [0, 1]}


def _schema(extra: JSONObject) -> JSONObject:
    properties: JSONObject = {"transcript": {"type": "string"}, **extra, "verdict": _VERDICT}
    properties["evidence"] = {"type": "string"}
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


INTENDED_SCHEMA = _schema({})
ENTITY_SCHEMA = _schema({"entities_spoken": {"type": "boolean"}})

SYSTEM = (
    "You listen to single turns of a voice agent recorded on phone calls and check, character "
    "by character where it matters, whether the caller heard the right thing. Answer only "
    "with the JSON object you are asked for."
)

INTENDED_USER = """\
The attached audio is agent turn {turn} of a phone call. The agent meant to say:
[intended]
{intended_text}
[/intended]
Key entities in it: {entities}

First write down what you hear in the clip. Then compare it with the intended text.
verdict 1: the audio says the intended text; every entity (code, ID, name, date, time,
amount, phone number, spelled-out letters and digits) comes out exactly, each character in
order; no part of the text is dropped, added or changed in a way that changes what a
listener takes away.
verdict 0: any entity is misspoken, garbled or incomplete (a letter or digit substituted,
dropped, added or confused with a similar sound), or a part of the text is missing, added
or changed so that the listener would understand something else.
Ignore the voice, accent, speed and pauses, a little silence at either end of the clip, and
harmless differences in reading a number or date ("the 5th of March" for "March 5").
Answer as {{"transcript": "...", "verdict": 0 or 1, "evidence": "..."}}; the evidence names
what differed, or says that everything matched."""

ENTITY_USER = """\
The attached audio is agent turn {turn} of a phone call with a speech-to-speech voice agent
(there is no text of what it meant to say). These are the entities it had been given so far,
by the caller or by its tools:
{entity_list}

First write down what you hear in the clip. Then decide whether the turn speaks any of the
listed entities (whole or in part, in any spoken form).
entities_spoken false: it speaks none of them (a greeting, a question, a general remark);
then answer verdict 1.
entities_spoken true, verdict 1: every listed entity it speaks comes out exactly, each
letter and digit in order.
entities_spoken true, verdict 0: a listed entity it speaks is garbled, incomplete or
misarticulated (a letter or digit substituted, dropped, added or confused with a similar
sound).
Only how the entities sound is rated: a value that is clearly different on purpose (another
amount or date than the tool gave) or a value not in the list is a question of correctness,
judged elsewhere. Ignore the voice, accent and speed.
Answer as {{"transcript": "...", "entities_spoken": true or false, "verdict": 0 or 1,
"evidence": "..."}}; the evidence names the entity and what was heard."""


INTENDED_TEMPLATE = verdict_template(
    "agent-speech-fidelity-intended-text",
    SYSTEM,
    INTENDED_USER,
    INTENDED_SCHEMA,
    number_field("verdict"),
)
ENTITY_TEMPLATE = replace(
    INTENDED_TEMPLATE,
    name="agent-speech-fidelity-entities",
    user=ENTITY_USER,
    schema=ENTITY_SCHEMA,
)


def variant_for(pipeline: str) -> Variant:
    """Speech-to-speech systems have no intended text to compare with: entity variant."""
    return "entities" if pipeline == "speech_to_speech" else "intended_text"


def _entity_lines(entities: list[SourcedEntity]) -> str:
    return "\n".join(f"- {e.value} (from {e.source})" for e in entities)


def _request(
    timeline: Timeline,
    track: Audio,
    turn: SpokenTurn,
    variant: Variant,
    known: Mapping[str, str],
) -> tuple[TurnRequest | None, list[str], str]:
    """The judge request for one turn (None when not sent, with the reason) and its entities."""
    audio = turn_audio(track, turn)
    if variant == "intended_text":
        if not turn.intended_text:
            return None, [], "no intended text"
        entities = extract_entities(turn.intended_text, known)
        variables: dict[str, str | int] = {
            "turn": turn.turn,
            "intended_text": turn.intended_text,
            "entities": "; ".join(entities) or "(none)",
        }
    else:
        given = entities_given_by(timeline, turn.turn, turn.end, known)
        if not given:
            return None, [], "no entity given to the agent yet"
        entities = [e.value for e in given]
        variables = {"turn": turn.turn, "entity_list": _entity_lines(given)}
    if audio.is_empty():
        return None, entities, "no audio on the track for this turn"
    return TurnRequest(turn.turn, variables, audio), entities, ""


@metric(
    "agent_speech_fidelity",
    better="higher",
    failure=FailureValue(0.0, False, "no agent turn spoken faithfully"),
    protocols=("live_call",),
    modes=("audio",),
)
def agent_speech_fidelity(record: LiveCallRecord, resources: ScoringResources) -> Score:
    """Mean binary verdict of the audio judge over the agent's rated turns; pass >= 0.95."""
    if record.timeline is None:
        return Score.not_run("no event timeline for this call")
    track = record.tracks.get("assistant")
    if track is None:
        return Score.not_run(
            "no assistant audio track (a text-mode call has no audio)", not_applicable=True
        )
    judge = audio_judge_of(resources)  # ProviderUnavailable -> not run with the reason
    variant = variant_for(record.pipeline)
    known = record.scenario.entities if record.scenario is not None else {}
    facts: dict[str, Any] = {"method": METHOD, "variant": variant, "pipeline": record.pipeline}
    requests: list[TurnRequest] = []
    entities: dict[int, list[str]] = {}
    cut: list[int] = []
    unrated: dict[str, str] = {}
    timeline = record.timeline
    for turn in spoken_turns(timeline, "assistant"):
        if turn.interrupted:
            cut.append(turn.turn)
            continue
        request, entities[turn.turn], why = _request(timeline, track, turn, variant, known)
        if request is None:
            unrated[str(turn.turn)] = why
        else:
            requests.append(request)
    facts.update(cut_turns=cut, unrated_turns=unrated)
    if not requests:
        return Score.not_run("no agent turn to rate", **facts)
    template = INTENDED_TEMPLATE if variant == "intended_text" else ENTITY_TEMPLATE
    graded = judge_each_turn(judge, template, requests)
    if isinstance(graded, Score):
        return replace(graded, details={**graded.details, **facts})
    turns: list[dict[str, Any]] = []
    verdicts: dict[int, int] = {}  # rated turns only
    for number, answer in graded.answers.items():
        rated = bool(answer.get("entities_spoken", True))
        if rated:
            verdicts[number] = as_int(answer["verdict"], "verdict")
        else:
            unrated[str(number)] = "speaks none of the given entities"
        turns.append(
            {
                "turn": number,
                "rated": rated,
                "verdict": as_int(answer["verdict"], "verdict"),
                "evidence": str(answer["evidence"]),
                "transcript": str(answer["transcript"]),
                "entities": entities[number],
            }
        )
    details = {
        **facts,
        "turns": turns,
        "rated_turns": len(verdicts),
        "failed_turns": [n for n, v in verdicts.items() if not v],
        **graded.bookkeeping,
    }
    if not verdicts:
        return Score.not_run("no agent turn spoke an entity it had been given", **details)
    value = sum(verdicts.values()) / len(verdicts)
    return Score(value=value, passed=value >= AGENT_PASS, details=details)
