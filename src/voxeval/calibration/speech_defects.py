"""The audio examples: a correct call's agent turns rendered to speech (the embedded TTS by
default), laid out on an agent track with the timeline's times fitted to the audio, and a
copy in which one turn's audio was rendered from text with one entity one character off
while the intended text keeps the right one: what a cascade whose TTS input got corrupted
(or a voice that misreads a code) would record.

Only the agent track is rendered: agent speech fidelity of a cascade compares the agent's
audio with its intended text, and rendering is the slow part."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

import numpy as np

from voxeval.audio import Audio
from voxeval.calibration.clean_calls import CleanCall
from voxeval.calibration.text_defects import DefectEdit, one_character_off
from voxeval.calibration.timeline_edits import TURN_GAP_S, speech_seconds
from voxeval.scoring.calls.live_call_record import LiveCallRecord
from voxeval.scoring.text.spoken_entities import extract_entities
from voxeval.simulation.timeline import EndEvent, SpeakerSegment, Timeline

Renderer = Callable[[str], Audio]
RATE = 16000


def _entity_turns(call: CleanCall) -> list[tuple[int, str]]:
    """(agent turn, entity as written) for every entity an agent turn says literally."""
    known = call.scenario.entities
    out = []
    for seg in call.timeline.speech("assistant"):
        for entity in extract_entities(seg.intended_text, known):
            # codes and amounts; a date ("March 19th") one digit off would not be a real date
            literal = entity in seg.intended_text and not re.search(r"[A-Za-z]{3,}", entity)
            if literal and any(ch.isdigit() for ch in entity):
                out.append((seg.turn, entity))
    return out


def laid_out(timeline: Timeline, agent_audio: dict[int, Audio]) -> tuple[Timeline, Audio]:
    """The timeline re-timed so each agent turn lasts as long as its audio (caller turns as
    long as the text-mode clock says), and the agent track holding the audio at those
    times."""
    cursor = 0.0
    segments: list[SpeakerSegment] = []
    starts: dict[int, float] = {}
    placed: list[tuple[float, Audio]] = []
    for seg in sorted(timeline.segments, key=lambda s: s.start):
        if seg.speaker == "assistant" and seg.turn in agent_audio:
            audio = agent_audio[seg.turn]
            length = audio.duration
            placed.append((cursor, audio))
        else:
            length = speech_seconds(seg.intended_text)
        if seg.speaker == "assistant":
            starts.setdefault(seg.turn, cursor)
        segments.append(replace(seg, start=cursor, end=cursor + length))
        cursor += length + TURN_GAP_S
    tools = [replace(e, t=max(0.0, starts.get(e.turn, 0.0) - 0.05)) for e in timeline.tools]
    end = EndEvent(cursor, timeline.end.reason if timeline.end else "agent_end_call")
    track = np.zeros(round(cursor * RATE) + 1, np.float32)
    for start, audio in placed:
        at = round(start * RATE)
        samples = audio.samples[: len(track) - at]
        track[at : at + len(samples)] = samples
    return Timeline(segments=segments, tools=tools, end=end), Audio(track, RATE)


def mispronounced_entity(
    call: CleanCall, rng: np.random.Generator, render: Renderer
) -> tuple[LiveCallRecord, LiveCallRecord, DefectEdit] | None:
    """(the clean call with its agent audio, the copy with one entity misspoken, the edit);
    None when no agent turn says an entity with a digit in it."""
    candidates = _entity_turns(call)
    if not candidates:
        return None
    turn, entity = candidates[int(rng.integers(len(candidates)))]
    spoken = one_character_off(entity, rng)
    texts = {s.turn: s.intended_text for s in call.timeline.speech("assistant") if s.intended_text}
    clean_audio = {t: render(text) for t, text in texts.items()}
    wrong_text = re.sub(re.escape(entity), spoken, texts[turn], count=1)
    defect_audio = {**clean_audio, turn: render(wrong_text)}
    clean_timeline, clean_track = laid_out(call.timeline, clean_audio)
    defect_timeline, defect_track = laid_out(call.timeline, defect_audio)
    clean = call.record(clean_timeline, tracks={"assistant": clean_track})
    defect = call.record(defect_timeline, tracks={"assistant": defect_track})
    edit: DefectEdit = {
        "turn": turn,
        "intended": entity,
        "spoken": spoken,
        "rendered_text": wrong_text,
    }
    return clean, defect, edit
