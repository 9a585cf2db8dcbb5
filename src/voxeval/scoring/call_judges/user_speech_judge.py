"""User speech fidelity rated by an audio-capable judge: did the simulated caller's audio carry
what the caller meant to say? This validates the *simulation* (our caller's voice and the
perturbations applied to it), not the system under test: a call that fails it tested the
agent on the wrong input and should be regenerated (EVA-Bench's gate: any turn rated 1).

One judge call per caller turn (a turn split by pauses is one turn), with that turn's audio
cut from the recorded ``user`` track, the caller's intended text and its key entities
(``extract_entities``). The judge rates 1-3 (the prompt is ours): 3 everything came through,
2 understandable with a slip that would not stop an agent, 1 a key entity lost or wrong or
the content changed. ``value`` is 1.0 when no turn is rated 1, else 0.0 (then
``details["regenerate"]`` is true); ``details["turns"]`` lists ``{turn, rating, evidence}``
(with the transcript and entities) and ``details["lowest_rating"]`` the worst rating.

The ``user`` track is what the agent heard, perturbations included: under strong noise or
packet loss this also measures the perturbation."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from voxeval.json_types import JSONObject
from voxeval.scoring.call_judges.judged_call import number_field, rating_property, rating_template
from voxeval.scoring.call_judges.judged_ratings import RATING_MIN
from voxeval.scoring.call_judges.turn_judging import TurnRequest, audio_judge_of, judge_each_turn
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.calls.speech_fidelity import spoken_turns, turn_audio
from voxeval.scoring.judge_answer import as_int
from voxeval.scoring.metric import DESCRIPTIVE, metric
from voxeval.scoring.replies.reply_record import ScoringResources
from voxeval.scoring.score import Score
from voxeval.scoring.text.spoken_entities import extract_entities

METHOD = "audio_judge"

SCHEMA: JSONObject = {
    "type": "object",
    "properties": {
        "transcript": {"type": "string"},
        "rating": rating_property(),
        "evidence": {"type": "string"},
    },
    "required": ["transcript", "rating", "evidence"],
    "additionalProperties": False,
}

SYSTEM = (
    "You listen to single turns of a simulated caller recorded on phone calls and check "
    "whether the audio carried what the caller meant to say. Answer only with the JSON "
    "object you are asked for."
)

USER = """\
The attached audio is caller turn {turn} of a phone call. The caller meant to say:
[intended]
{intended_text}
[/intended]
Key entities in it: {entities}

First write down what you hear in the clip. Then rate how well the audio carried the
intended content. The caller does not have to say every word as written; what matters is
that an agent listening would get the same information.
3: every key entity comes out exactly (each letter and digit in order) and the content is
intact.
2: understandable with a slip (a stumble, a changed or missing filler word, odd timing)
that would not keep an agent from going on; every key entity intact.
1: a key entity is lost, garbled or wrong (a letter or digit substituted, dropped, added or
confused with a similar sound), or content is missing or added so that the agent could not
go on sensibly.
Ignore the voice, accent and speed; background noise matters only where it hides content.
Answer as {{"transcript": "...", "rating": 1-3, "evidence": "..."}}; the evidence names
what was lost or changed, or says that everything came through."""


TEMPLATE = rating_template("user-speech-fidelity", SYSTEM, USER, SCHEMA, number_field("rating"))


@metric(
    "user_speech_fidelity",
    better=None,
    failure=DESCRIPTIVE,  # the caller is ours: a fault of the system says nothing about it
    protocols=("live_call",),
    modes=("audio",),
)
def user_speech_fidelity(record: LiveCallRecord, resources: ScoringResources) -> Score:
    """1.0 when the audio judge rated no caller turn 1, else 0.0 (regenerate the call)."""
    if record.timeline is None:
        return Score.not_run("no event timeline for this call")
    track = record.tracks.get("user")
    if track is None:
        return Score.not_run("no user audio track (a text-mode call has no audio)")
    judge = audio_judge_of(resources)  # ProviderUnavailable -> not run with the reason
    known = record.scenario.entities if record.scenario is not None else {}
    requests: list[TurnRequest] = []
    entities: dict[int, list[str]] = {}
    silent: list[int] = []
    for turn in spoken_turns(record.timeline, "user"):
        audio = turn_audio(track, turn)
        if not turn.intended_text or audio.is_empty():
            silent.append(turn.turn)
            continue
        entities[turn.turn] = extract_entities(turn.intended_text, known)
        variables: dict[str, str | int] = {
            "turn": turn.turn,
            "intended_text": turn.intended_text,
            "entities": "; ".join(entities[turn.turn]) or "(none)",
        }
        requests.append(TurnRequest(turn.turn, variables, audio))
    facts: dict[str, Any] = {"method": METHOD, "validates": "simulation", "unrated_turns": silent}
    if not requests:
        return Score.not_run("the caller said nothing to rate", **facts)
    graded = judge_each_turn(judge, TEMPLATE, requests)
    if isinstance(graded, Score):
        return replace(graded, details={**graded.details, **facts})
    ratings = {
        number: as_int(answer["rating"], "rating") for number, answer in graded.answers.items()
    }
    turns = [
        {
            "turn": number,
            "rating": ratings[number],
            "evidence": str(answer["evidence"]),
            "transcript": str(answer["transcript"]),
            "entities": entities[number],
        }
        for number, answer in graded.answers.items()
    ]
    lowest = min(ratings.values())
    value = 0.0 if lowest == RATING_MIN else 1.0
    details = {
        **facts,
        "turns": turns,
        "lowest_rating": lowest,
        "rated_turns": len(turns),
        "failed_turns": [n for n, r in ratings.items() if r == RATING_MIN],
        "regenerate": value == 0.0,
        **graded.bookkeeping,
    }
    return Score(value=value, passed=value == 1.0, details=details)
