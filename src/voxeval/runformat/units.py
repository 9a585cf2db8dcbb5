"""The record a protocol stores in each unit folder: ``reply.json`` (single turn),
``dialogue.json`` (multi-turn) and ``call.json`` (live calls). Fields a system or a
protocol adds (``details``, a call's adapter settings) are kept as written."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from voxeval.runformat.base import ArtifactModel, Number, StoredJson

REPLY_FILE = "reply.json"
DIALOGUE_FILE = "dialogue.json"
DIALOGUE_FAULT_FILE = "system_fault.json"
CALL_FILE = "call.json"


class SystemFaultRecord(ArtifactModel):
    """The system under test failed: the cause (``timeout``, ``no_audio``, ...) and message."""

    cause: str
    message: str = ""


class ReplyFile(ArtifactModel):
    """``reply.json``: a single-turn system's answer to one rendered query."""

    item_id: str
    query_id: str
    profile: str | None = None
    voice: str | None = None
    noise: str | None = None
    system: str
    trial: int
    condition: str
    text: str | None = None
    has_audio: bool = False
    audio_s: Number | None = None
    timing: dict[str, Number | None] = Field(default_factory=dict)  # measured: wall_s, ...
    details: StoredJson | None = Field(default_factory=dict)  # null in some older files
    system_fault: SystemFaultRecord | None = None


class DialogueTurnRecord(ArtifactModel):
    """One answered turn of a dialogue (``reply_audio`` relative to the unit folder)."""

    index: int
    user_text: str | None = None
    user_audio: str | None = None
    reply_text: str | None = None
    reply_audio: str | None = None
    reply_duration_s: Number | None = None
    timing: dict[str, Number | None] = Field(default_factory=dict)
    reply_transcript_only: bool | None = None  # a replay answered from a transcript alone


class DialogueFile(ArtifactModel):
    """``dialogue.json``: a multi-turn unit's turns, in order."""

    dialogue: str
    dimension: str | None = None
    system: str
    trial: int
    turns: list[DialogueTurnRecord] = Field(default_factory=list)


class DialogueFaultFile(SystemFaultRecord):
    """``system_fault.json`` of a multi-turn unit: the fault and the turn it happened at."""

    turn: int | None = None


class LatencyTurn(ArtifactModel):
    turn: int
    agent_s: Number | None = None
    rendering_s: Number | None = None
    rendered_by_voxeval: bool | None = None


class CallLatency(ArtifactModel):
    """How the call's delays were made: modelled or measured, on which clock."""

    agent: str | None = None
    clock: str | None = None
    turns: list[LatencyTurn] = Field(default_factory=list)


class CallFile(ArtifactModel):
    """``call.json``: a live call's outcome, written last (its presence marks a complete
    recording). ``wall_s`` and ``compute_s`` are measured; the rest is reproducible."""

    end_reason: str
    error: str | None = None
    duration_s: Number
    wall_s: Number | None = None
    audio: bool = False
    mode: Literal["text", "audio"] | None = None
    scenario: str | None = None
    system: str | None = None
    trial: int | None = None
    condition: str | None = None
    persona: str | None = None
    seed: int | None = None
    agent: str | None = None
    caller: str | None = None
    compute_s: Number | None = None
    latency: CallLatency | None = None
    system_fault: SystemFaultRecord | None = None


UnitRecordFile = ReplyFile | DialogueFile | CallFile

# The record file of each protocol's unit folder.
RECORD_FILES: dict[str, tuple[str, type[ReplyFile] | type[DialogueFile] | type[CallFile]]] = {
    "single_turn": (REPLY_FILE, ReplyFile),
    "multi_turn": (DIALOGUE_FILE, DialogueFile),
    "live_call": (CALL_FILE, CallFile),
}
