"""Where a single-turn unit's reply goes: ``reply.json`` and ``assistant.wav`` in its unit
folder (or the system's fault instead), the query audio linked in as ``user.wav``, and what
was written kept in memory for the unit's scoring (``fresh_replies``)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from voxeval import atomic_files
from voxeval.api.context import RunContext
from voxeval.api.reply_faults import reply_failed
from voxeval.api.system_usage import SystemMeter, record_system_usage
from voxeval.api.work_unit import WorkUnit
from voxeval.audio import Audio, audio_to_wav_bytes
from voxeval.errors import SystemFault, VoxevalError
from voxeval.json_types import JSONObject
from voxeval.protocols.fresh_replies import FreshReplies
from voxeval.protocols.single_turn_items import RenderedQuery
from voxeval.runformat import ReplyFile, record_data
from voxeval.systems.base import Reply

USER_WAV, ASSISTANT_WAV, REPLY_JSON = "user.wav", "assistant.wav", "reply.json"


def write_wav(path: Path, audio: Audio) -> bytes:
    """Write ``audio`` to ``path``; returns the bytes written."""
    # Encoding in memory and renaming into place is atomic and ~5x faster than soundfile's
    # file writer here (it flushes per block).
    data = audio_to_wav_bytes(audio)
    atomic_files.write_bytes_atomic(path, data)
    return data


def stored_reply(unit_dir: Path) -> JSONObject:
    reply = atomic_files.read_json(unit_dir / REPLY_JSON)
    if not isinstance(reply, dict):
        raise VoxevalError(
            f"{unit_dir / REPLY_JSON}: no stored reply; run the unit before scoring it"
        )
    return reply


def link_into(source: Path, target: Path) -> bool:
    """Hard-link the rendered query as the unit's ``user.wav`` (the exact bytes the system
    heard, no copy; the builder replaces files rather than editing them). False when the
    file system cannot link, e.g. across devices."""
    try:
        # a new unit folder (the common case): the link appears under its final name at once
        os.link(source, target)
        return True
    except FileExistsError:
        pass  # a unit run again: replace what is there (below)
    except OSError:
        return False
    # Links left by a process killed between link and rename (one unit runs on one thread).
    prefix = f".{target.name}."
    for name in os.listdir(target.parent):
        if name.startswith(prefix) and name.endswith(".link"):
            (target.parent / name).unlink(missing_ok=True)
    try:
        if target.exists() and os.path.samefile(source, target):
            return True  # a resumed unit: already the same file (rename would be a no-op)
    except OSError:
        pass
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.link")
    try:
        os.link(source, tmp)
        os.replace(tmp, target)
    except OSError:
        return False
    finally:
        # rename() between two links of one file succeeds without removing the source name
        tmp.unlink(missing_ok=True)
    return True


def fault_to_json(
    unit: WorkUnit, item: RenderedQuery, fault: SystemFault, wall_s: float
) -> JSONObject:
    """``reply.json`` of a reply that failed: no text, no audio, the fault and its cause."""
    return {
        **reply_header(unit, item),
        "text": None,
        "has_audio": False,
        "audio_s": None,
        "timing": {"wall_s": wall_s},
        "details": {},
        "system_fault": {"cause": fault.cause, "message": str(fault)},
    }


def reply_header(unit: WorkUnit, item: RenderedQuery) -> JSONObject:
    return {
        "item_id": unit.item_id,
        "query_id": item.query.id,
        "profile": item.profile,
        "voice": item.voice,
        "noise": item.noise,
        "system": unit.system,
        "trial": unit.trial,
        "condition": unit.condition,
    }


def reply_to_json(unit: WorkUnit, item: RenderedQuery, reply: Reply, wall_s: float) -> JSONObject:
    return {
        **reply_header(unit, item),
        "text": reply.text,
        "has_audio": reply.audio is not None and not reply.audio.is_empty(),
        "audio_s": None if reply.audio is None else reply.audio.duration,
        "timing": {**reply.timing, "wall_s": wall_s},
        "details": reply.details,
    }


class SingleTurnReplies:
    """Stores each unit's reply (or fault) and keeps it for the unit's scoring."""

    def __init__(self) -> None:
        self._fresh = FreshReplies()  # each unit's reply, from its interaction to its scoring

    def take(self, unit_dir: Path) -> tuple[JSONObject, Audio | None] | None:
        """What the interaction of the unit in ``unit_dir`` stored in this process (its
        reply.json and assistant.wav), or None; see ``FreshReplies.take``."""
        return self._fresh.take(unit_dir, ASSISTANT_WAV)

    def forget_all(self) -> None:
        """Let go of every reply kept for scoring (``RunContext.close``)."""
        self._fresh = FreshReplies()

    def conclude(
        self,
        unit: WorkUnit,
        ctx: RunContext,
        item: RenderedQuery,
        unit_dir: Path,
        wall_s: float,
        reply: Reply | None,
        error: Exception | None,
        meter: SystemMeter,
        heard: Audio,
    ) -> None:
        """Store the reply, or the system's fault (raised), and what it cost (``meter``; the
        system heard ``heard``). An error on our side (``api.reply_faults.NOT_SYSTEM_FAULTS``)
        is re-raised for the runner to retry."""
        if error is None and (reply is None or reply.audio is None or reply.audio.is_empty()):
            error = SystemFault(f"system {unit.system!r} answered without audio", cause="no_audio")
        if error is not None:
            reply_failed(
                ctx,
                unit,
                error,
                who=f"system {unit.system!r}",
                meter=meter,
                heard=heard,
                reply=reply,
                store_fault=lambda fault: self.store(
                    unit_dir, fault_to_json(unit, item, fault, wall_s), None
                ),
            )
        assert reply is not None
        self.store(unit_dir, reply_to_json(unit, item, reply, wall_s), reply.audio)
        record_system_usage(ctx, unit, reply.details, meter, heard=heard, spoke=reply.audio)

    def store(self, unit_dir: Path, reply: JSONObject, audio: Audio | None) -> None:
        """Write reply.json and assistant.wav, and keep what was written for the unit's
        scoring (``fresh_replies``)."""
        self._fresh.forget(unit_dir)  # an earlier attempt's, if this write fails
        assistant = unit_dir / ASSISTANT_WAV
        wav = None
        if audio is not None:
            wav = write_wav(assistant, audio)
        elif assistant.exists():
            assistant.unlink()  # a stale reply from an earlier attempt must not be scored
        (unit_dir / "transcripts.json").unlink(missing_ok=True)
        path = unit_dir / REPLY_JSON
        text = atomic_files.write_record_json_atomic(path, record_data(ReplyFile, reply, path))
        self._fresh.keep(unit_dir, text, wav)
