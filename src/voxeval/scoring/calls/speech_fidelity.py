"""Offline speech-fidelity checks of a recorded call: does the audio carry the key entities of
the text its speaker intended to say? Each turn's audio is cut from the party's track and
transcribed with the run's scoring ASR; the entities are those of ``extract_entities``.

- ``agent_speech_fidelity_asr``: the agent's turns (an ASR proxy for EVA-Bench's audio-judge
  speech fidelity, reported under its own name: it checks entities only, not prosody or
  the rest of the wording).
- ``user_speech_fidelity_asr``: the caller's turns against the scenario's key entities it
  said. This validates the *simulation* (our caller's TTS), so a failure is never a failure of
  the system under test: the ``user_speech`` validation gate regenerates the call
  (``voxeval.scoring.calls.simulation_gates``).

A turn is rated 1 when its transcript carries every entity, else 0; turns without entities,
and agent turns cut short by the caller (their audio never held the whole text), are not
rated. Both are not run on text-mode calls (no audio) or without a scoring ASR; a failing
scoring ASR is our fault and leaves the metric pending.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from voxeval.audio import Audio
from voxeval.json_types import JSONReadValue
from voxeval.scoring.calls.floor_speech import floor_speech
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.metric import DESCRIPTIVE, FailureValue, metric
from voxeval.scoring.replies.reply_record import ScoringResources, scoring_asr_faults
from voxeval.scoring.score import Score
from voxeval.scoring.text.spoken_entities import (
    extract_entities,
    known_entities_in,
    missed_entities,
)
from voxeval.simulation.timeline import Speaker, SpeakerSegment, Timeline

AGENT_PASS = 0.95  # EVA-Bench's speech-fidelity threshold
_PAD_S = 0.15  # audio kept around a segment so a clipped first word is not lost


@dataclass(frozen=True)
class SpokenTurn:
    """One party's turn: its intended text and where its audio lies on the track."""

    turn: int
    intended_text: str
    start: float
    end: float
    interrupted: bool


def spoken_turns(timeline: Timeline, speaker: Speaker) -> list[SpokenTurn]:
    """The party's turns in order; a caller turn split into several segments (pauses) is one
    turn from its first segment's start to its last one's end (its pieces' texts joined).
    Backchannels are not turns: they carry the listener's current turn number but are left out,
    so an "mm-hm" neither stretches that turn's audio nor joins its text."""
    by_turn: dict[int, list[SpeakerSegment]] = {}
    for seg in floor_speech(timeline, speaker):
        by_turn.setdefault(seg.turn, []).append(seg)
    return [
        SpokenTurn(
            turn=turn,
            intended_text=" ".join(s.intended_text for s in segs if s.intended_text).strip(),
            start=min(s.start for s in segs),
            end=max(s.end for s in segs),
            interrupted=any(s.interrupted for s in segs),
        )
        for turn, segs in sorted(by_turn.items())
    ]


def turn_audio(track: Audio, turn: SpokenTurn) -> Audio:
    """The turn's audio cut from its party's track, with a small margin on both sides."""
    return track.slice(max(0.0, turn.start - _PAD_S), turn.end + _PAD_S)


def _transcribe(resources: ScoringResources, audio: Audio, language: str) -> str:
    """The scoring ASR's transcript; its failure is our side's fault (pending), not a result."""
    asr = resources.asr()
    with scoring_asr_faults():
        return str(asr.transcribe(audio, language=language).text)


def _check(
    record: LiveCallRecord,
    resources: ScoringResources | None,
    speaker: Speaker,
    entities_of: Callable[[str], list[str]],
) -> tuple[list[dict[str, JSONReadValue]], list[int]] | Score:
    """Per rated turn ``{turn, entities, missed, transcript}``, and the turns not rated
    because they were cut short; or the not-run score when the check cannot run."""
    if record.timeline is None:
        return Score.not_run("no event timeline for this call")
    track = record.tracks.get(speaker)
    if track is None:
        return Score.not_run(
            f"no {speaker} audio track (a text-mode call has no audio)", not_applicable=True
        )
    if resources is None:
        return Score.not_run("no scoring ASR is configured")
    language = record.scenario.language if record.scenario is not None else "en"
    rated: list[dict[str, JSONReadValue]] = []
    cut: list[int] = []
    for turn in spoken_turns(record.timeline, speaker):
        entities = entities_of(turn.intended_text)
        if not entities:
            continue
        if turn.interrupted and speaker == "assistant":
            cut.append(turn.turn)
            continue
        audio = turn_audio(track, turn)
        heard = _transcribe(resources, audio, language) if not audio.is_empty() else ""
        missed = missed_entities(entities, heard, language)
        rated.append(
            {"turn": turn.turn, "entities": entities, "missed": missed, "transcript": heard}
        )
    return rated, cut


def _summary(rated: list[dict[str, JSONReadValue]], cut: list[int]) -> dict[str, JSONReadValue]:
    failed = [r["turn"] for r in rated if r["missed"]]
    return {
        "method": "asr_proxy",  # never the audio judge's ``agent_speech_fidelity``
        "turns": rated,
        "failed_turns": failed,
        "rated_turns": len(rated),
        "cut_turns": cut,
    }


@metric(
    "agent_speech_fidelity_asr",
    better="higher",
    failure=FailureValue(0.0, False, "no agent turn carried its entities"),
    protocols=("live_call",),
    modes=("audio",),
)
def agent_speech_fidelity_asr(
    record: LiveCallRecord, resources: ScoringResources | None = None
) -> Score:
    """Share of the agent's turns whose audio, transcribed by the scoring ASR, carries every
    key entity of the turn's intended text (the scenario's key entities and the codes, dates,
    amounts and phone numbers it contains); pass >= 0.95. An offline ASR proxy, not the
    audio judge of EVA-Bench."""
    known: Mapping[str, str] = record.scenario.entities if record.scenario is not None else {}
    checked = _check(record, resources, "assistant", lambda text: extract_entities(text, known))
    if isinstance(checked, Score):
        return checked
    rated, cut = checked
    if not rated:
        return Score.not_run("no agent turn to rate: none spoke a key entity", cut_turns=cut)
    value = sum(1 for r in rated if not r["missed"]) / len(rated)
    return Score(value=value, passed=value >= AGENT_PASS, details=_summary(rated, cut))


@metric(
    "user_speech_fidelity_asr",
    better=None,
    failure=DESCRIPTIVE,
    protocols=("live_call",),
    modes=("audio",),
)
def user_speech_fidelity_asr(
    record: LiveCallRecord, resources: ScoringResources | None = None
) -> Score:
    """Share of the caller's turns whose audio carries every scenario key entity the caller
    meant to say in that turn. A simulation-validation signal: it passes only when every
    turn carried its entities; a failure marks the call for regeneration
    (``details["regenerate"]``), it is not a failure of the system under test."""
    if record.scenario is None:
        return Score.not_run("needs the call's scenario (its key entities)")
    known = record.scenario.entities
    if not known:
        return Score.not_run("the scenario lists no key entities")
    checked = _check(record, resources, "user", lambda text: known_entities_in(text, known))
    if isinstance(checked, Score):
        return checked
    rated, _ = checked
    if not rated:
        return Score.not_run("the caller never said a key entity")
    value = sum(1 for r in rated if not r["missed"]) / len(rated)
    details = {**_summary(rated, []), "regenerate": value < 1.0, "validates": "simulation"}
    return Score(value=value, passed=value == 1.0, details=details)
