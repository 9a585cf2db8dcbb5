"""Finding the spoken answer in a chat completion, wherever an OpenAI-compatible server puts it.

Accepted, in every choice of ``choices`` (in order):

- ``message.audio = {data, transcript?, format?}`` — OpenAI's audio models, and vLLM-Omni,
  which answers with the text in ``choices[0]`` and the audio in another choice;
- content parts of ``message.content`` carrying ``{data, format?, transcript?}`` under
  ``audio``, ``output_audio`` or ``input_audio`` (servers that echo the input part shape).

The text of the reply is the first non-empty text content (a string ``content`` or its
``text`` parts) of any choice; without one, the audio's transcript. The first audio payload
found is the spoken answer. Its bytes (base64) are an encoded file (WAV, FLAC, OGG, MP3) or
headerless 16-bit little-endian mono PCM at ``pcm_rate``. Bytes that start with a file
header (RIFF, FLAC, OGG, ID3, ...) are decoded as that file whatever the label; headerless
bytes are PCM when the payload's ``format`` (or, without one, the requested format) is
``pcm16``/``pcm``/``s16le``/``wav``, and otherwise decoded as the declared file format (an
MP3 without its tag).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass

from voxeval.audio import Audio, audio_from_bytes, pcm16_to_audio
from voxeval.errors import AudioError
from voxeval.json_types import JSONValue

# OpenAI's pcm16 output is 24 kHz; servers that differ are configured with ``pcm_rate``.
DEFAULT_PCM_RATE = 24000
PCM_FORMATS = frozenset({"pcm16", "pcm", "s16le", "pcm_s16le"})
_AUDIO_PART_KEYS = ("audio", "output_audio", "input_audio")
_TEXT_PART_TYPES = frozenset({"text", "output_text"})
# First bytes of the file formats soundfile reads (WAV/RF64/AIFF, FLAC, OGG, MP3 with a tag).
_FILE_MAGIC = (b"RIFF", b"RIFX", b"RF64", b"FORM", b"fLaC", b"OggS", b"ID3")
# Labels under which servers send headerless samples.
_HEADERLESS_PCM_LABELS = frozenset({"wav", "raw", ""})


@dataclass(frozen=True)
class SpokenPayload:
    """One base64 audio payload of a reply and where it was found (for messages)."""

    data: str
    format: str | None
    transcript: str
    where: str


@dataclass(frozen=True)
class ReplyChannels:
    text: str
    spoken: SpokenPayload | None


def find_reply_channels(choices: Sequence[JSONValue]) -> ReplyChannels:
    """The text and the first audio payload found in a completion's ``choices``."""
    texts: list[str] = []
    payloads: list[SpokenPayload] = []
    for i, choice in enumerate(choices):
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            continue
        where = f"choices[{i}].message"
        payload = _payload(message.get("audio"), f"{where}.audio")
        if payload is not None:
            payloads.append(payload)
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            for j, part in enumerate(content):
                if not isinstance(part, dict):
                    continue
                part_text = part.get("text")
                if part.get("type") in _TEXT_PART_TYPES and isinstance(part_text, str):
                    texts.append(part_text)
                for key in _AUDIO_PART_KEYS:
                    payload = _payload(part.get(key), f"{where}.content[{j}].{key}")
                    if payload is not None:
                        payloads.append(payload)
    spoken = payloads[0] if payloads else None
    text = next((t for t in texts if t.strip()), "")
    if not text and spoken is not None:
        text = spoken.transcript
    return ReplyChannels(text=text, spoken=spoken)


def _payload(value: JSONValue, where: str) -> SpokenPayload | None:
    if not isinstance(value, dict):
        return None
    data = value.get("data")
    if not isinstance(data, str) or not data:
        return None
    fmt = value.get("format")
    transcript = value.get("transcript")
    return SpokenPayload(
        data=data,
        format=str(fmt).lower() if fmt else None,
        transcript=str(transcript) if transcript else "",
        where=where,
    )


def decode_spoken_payload(
    payload: SpokenPayload, *, pcm_rate: int, source: str, requested_format: str = "wav"
) -> Audio:
    """The payload's audio. Raises ``AudioError`` (with ``source`` and the payload's place)
    when it is not base64, not decodable, or empty."""
    where = f"{source} ({payload.where})"
    try:
        raw = base64.b64decode(payload.data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise AudioError(f"{where}: audio data is not base64 ({exc})") from exc
    if not raw:
        raise AudioError(f"{where}: no audio bytes")
    if not _is_pcm16(raw, payload.format or requested_format.lower()):
        return audio_from_bytes(raw, source=where)
    if len(raw) % 2:
        raise AudioError(
            f"{where}: {len(raw)} bytes of headerless audio is not 16-bit PCM (odd length)"
        )
    return pcm16_to_audio(raw, pcm_rate, where)


def _is_pcm16(raw: bytes, fmt: str) -> bool:
    """A file header wins over the declared format; headerless bytes are PCM unless a
    headerless file format (MP3 frames, raw Opus/AAC) was declared or requested. WAV declared
    without a RIFF header is PCM: servers that stream the samples label them wav."""
    if raw.startswith(_FILE_MAGIC):
        return False
    return fmt in PCM_FORMATS or fmt in _HEADERLESS_PCM_LABELS
