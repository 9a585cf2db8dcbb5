"""Replies produced elsewhere, looked up by item id.

Either ``folder:`` with ``<item_id>.wav`` (and optionally ``<item_id>.txt``, the system's text
channel), or ``manifest:`` — a JSONL file of ``{"item_id", "audio", "text"?}`` rows whose audio
paths are relative to the manifest. A row with ``"audio": null`` and a ``text`` is a
transcript-only reply (a released reply whose recording is absent): the reply carries the text
alone and says so in its details (``transcript_only``), so the protocol stores it labelled
instead of scoring a missing recording. The protocol passes the item id in ``Turn.item_id``; a
reply stored under the query id alone (the part before the first ``__``) serves every rendering
of that query.
Replay rows are scored exactly like live replies: same files, same metrics.

``channels`` (``mix``, ``left`` or ``right``; default mix) says how stereo replies become mono;
``max_audio_s`` (default 600) and ``max_audio_mb`` (default 200) cap each reply file, checked
from its size and header before decoding. Errors name the system, the source and the item.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from voxeval.audio import Audio, AudioLimits, ChannelMode, read_audio
from voxeval.audio.io import DEFAULT_MAX_AUDIO_MB, DEFAULT_MAX_AUDIO_S
from voxeval.config import SystemSpec
from voxeval.errors import AudioError, ConfigError, VoxevalError
from voxeval.json_types import JSONObject
from voxeval.providers.factory import ProviderSource
from voxeval.systems.base import REPLY, SYSTEMS, Reply, SystemBase, Turn
from voxeval.systems.options import parse_options


class ReplayOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    folder: str | None = None
    manifest: str | None = None
    channels: ChannelMode = "mix"
    max_audio_s: float = Field(default=DEFAULT_MAX_AUDIO_S, gt=0)
    max_audio_mb: float = Field(default=DEFAULT_MAX_AUDIO_MB, gt=0)

    def limits(self) -> AudioLimits:
        return AudioLimits(self.max_audio_s, self.max_audio_mb)

    @model_validator(mode="after")
    def _one_source(self) -> ReplayOptions:
        if (self.folder is None) == (self.manifest is None):
            raise ValueError("give exactly one of 'folder' or 'manifest'")
        return self


class ManifestRow(BaseModel):
    model_config = ConfigDict(extra="allow")
    item_id: str
    audio: str | None  # None: transcript-only (the text is the whole reply)
    text: str | None = None
    channels: ChannelMode | None = None  # this row's own choice (default: the system's)

    @model_validator(mode="after")
    def _something_to_replay(self) -> ManifestRow:
        if self.audio is None and not (self.text or "").strip():
            raise ValueError("a row without audio needs its text (transcript-only reply)")
        return self


class MissingReply(VoxevalError):
    """The replay source has no reply for an item."""


def lookup_ids(item_id: str) -> list[str]:
    """Ids tried in order: the rendered item id (``<query>__<profile>__<condition>``), then
    the query id alone, for sources with one reply per query."""
    query_id = item_id.split("__", 1)[0]
    return [item_id] if query_id == item_id else [item_id, query_id]


def load_manifest(path: Path) -> dict[str, ManifestRow]:
    if not path.is_file():
        raise ConfigError(f"{path}: replay manifest not found")
    rows: dict[str, ManifestRow] = {}
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = ManifestRow.model_validate(json.loads(line))
        except (json.JSONDecodeError, ValidationError) as exc:
            raise ConfigError(f"{path}:{lineno}: bad replay row ({exc})") from exc
        if row.item_id in rows:
            raise ConfigError(f"{path}:{lineno}: item {row.item_id!r} appears twice")
        rows[row.item_id] = row
    return rows


@SYSTEMS.register("replay")
class ReplaySystem(SystemBase):
    # Replies are looked up by benchmark item id: nothing to answer a live caller with.
    capabilities = frozenset({REPLY})

    def __init__(self, name: str, options: ReplayOptions) -> None:
        self.name = name
        self.options = options
        self._rows: dict[str, ManifestRow] | None = None
        if options.folder is not None:
            self.folder: Path | None = Path(options.folder).expanduser().resolve()
            if not self.folder.is_dir():
                raise ConfigError(f"system {name!r}: replay folder {self.folder} does not exist")
            self.manifest: Path | None = None
        else:
            assert options.manifest is not None
            self.folder = None
            self.manifest = Path(options.manifest).expanduser().resolve()
            self._rows = load_manifest(self.manifest)

    @classmethod
    def from_spec(cls, spec: SystemSpec, ctx: ProviderSource | None = None) -> ReplaySystem:
        return cls(spec.name, parse_options(spec, ReplayOptions))

    def identity(self) -> JSONObject:
        source = str(self.folder) if self.folder is not None else str(self.manifest)
        return {"type": "replay", "source": source}

    def reply(self, history: Sequence[Turn]) -> Reply:
        if not history or history[-1].role != "user":
            raise ValueError("replay.reply needs a history that ends with a user turn")
        item_id = history[-1].item_id
        if not item_id:
            raise MissingReply(f"system {self.name!r}: replay needs Turn.item_id to find a reply")
        if self.folder is not None:
            return self._from_folder(self.folder, item_id)
        assert self._rows is not None and self.manifest is not None
        row = next((self._rows[c] for c in lookup_ids(item_id) if c in self._rows), None)
        if row is None:
            raise MissingReply(f"replay manifest {self.manifest} has no row for item {item_id!r}")
        if row.audio is None:
            details = {"replayed": True, "transcript_only": True}
            return Reply(audio=None, text=row.text, details=details)
        audio_path = Path(row.audio)
        if not audio_path.is_absolute():
            audio_path = self.manifest.parent / audio_path
        if not audio_path.is_file():
            raise MissingReply(
                f"replay manifest {self.manifest}: item {item_id!r}: audio {audio_path} not found"
            )
        where = f"system {self.name!r}: replay manifest {self.manifest}: item {row.item_id!r}"
        audio = self._read(audio_path, f"{where}: audio", row.channels)
        return Reply(audio=audio, text=row.text, details={"replayed": True})

    def _read(self, path: Path, where: str, channels: ChannelMode | None = None) -> Audio:
        """A reply file with the system's channel choice and limits; errors say ``where``."""
        try:
            return read_audio(
                path, channels=channels or self.options.channels, limits=self.options.limits()
            )
        except AudioError as exc:
            raise AudioError(f"{where}: {exc}") from exc

    def _from_folder(self, folder: Path, item_id: str) -> Reply:
        found = [c for c in lookup_ids(item_id) if (folder / f"{c}.wav").is_file()]
        wav = folder / f"{found[0] if found else item_id}.wav"
        if not found:
            raise MissingReply(
                f"replay folder {folder} has no reply for item {item_id!r} ({wav.name})"
            )
        txt = wav.with_suffix(".txt")
        text = txt.read_text(encoding="utf-8").strip() if txt.is_file() else None
        where = f"system {self.name!r}: replay folder {folder}: item {item_id!r}: {wav.name}"
        return Reply(audio=self._read(wav, where), text=text, details={"replayed": True})
