"""Cache keys and the on-disk form of provider results.

Keys are the sha256 of canonical JSON (sorted keys, no spaces) of the call description, where
audio is replaced by the sha256 of its float32 samples plus its rate, so equal audio gives an
equal key whatever object holds it. Results are stored as JSON; their audio (a TTS output, a
spoken chat reply) as float32 WAV beside it, which round-trips the samples bit for bit.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
from pydantic import BaseModel

from voxeval.audio import Audio
from voxeval.json_types import JSONArray, JSONObject, JSONReadValue, JSONScalar, JSONValue
from voxeval.providers.base import (
    ChatResponse,
    MOSResult,
    ProviderResult,
    SpeechSegment,
    ToolCall,
    Transcript,
    Usage,
    Word,
)
from voxeval.redaction import without_url_credentials

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

Keyable: TypeAlias = (
    "JSONScalar | Audio | np.ndarray | np.generic | BaseModel | Path | DataclassInstance"
    " | Mapping[str, Keyable] | Sequence[Keyable]"
)
"""What ``canonical`` turns into a key: JSON values, audio, arrays, models, paths, dataclasses."""

PlainInput: TypeAlias = (
    "JSONScalar | np.generic | np.ndarray | Mapping[str, PlainInput] | list[PlainInput]"
    " | tuple[PlainInput, ...]"
)
"""Free-form result details: JSON values with numpy scalars and arrays among them."""


def audio_digest(audio: Audio) -> str:
    return hashlib.sha256(np.ascontiguousarray(audio.samples).tobytes()).hexdigest()


def canonical(value: Keyable) -> JSONValue:
    """A JSON-ready, order-independent form of ``value`` for hashing.

    Raises ``TypeError`` for values without a stable content form (the caller then skips the
    cache rather than risk two different inputs sharing a key).
    """
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Audio):
        return {"__audio_sha256__": audio_digest(value), "rate": value.rate}
    if isinstance(value, np.ndarray):
        digest = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
        return {"__array_sha256__": digest, "dtype": str(value.dtype), "shape": list(value.shape)}
    if isinstance(value, np.generic):
        return canonical(value.item())
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    if isinstance(value, BaseModel):
        return canonical(value.model_dump(mode="json"))
    if isinstance(value, Path):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return {"__type__": type(value).__name__, **{k: canonical(v) for k, v in fields.items()}}
    raise TypeError(f"cannot build a cache key from a {type(value).__name__}")


def without_auth(value: JSONReadValue) -> JSONReadValue:
    """``value`` (a provider identity) with credentials removed from every URL in it, so
    rotating a key written into a ``base_url`` keeps cache keys. Other secret-bearing fields
    (e.g. tokens in ``extra_body``) stay: they enter a key only through its sha256."""
    if isinstance(value, str):
        return without_url_credentials(value)
    if isinstance(value, dict):
        return {k: without_auth(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [without_auth(v) for v in value]
    return value


def canonical_json(value: Keyable) -> str:
    return json.dumps(canonical(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def cache_key(
    kind: str,
    method: str,
    identity: Keyable,
    parameters: Mapping[str, Keyable],
    inputs: Mapping[str, Keyable],
) -> str:
    call: dict[str, Keyable] = {
        "kind": kind,
        "method": method,
        "identity": identity,
        "parameters": parameters,
        "inputs": inputs,
    }
    return hashlib.sha256(canonical_json(call).encode("utf-8")).hexdigest()


def _plain(value: PlainInput) -> JSONValue:
    """JSON-ready copy of free-form details (numpy scalars to Python numbers)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def encode_result(result: ProviderResult) -> tuple[JSONObject, Audio | None]:
    """(JSON payload, audio to store beside it) for every result type providers return."""
    if isinstance(result, Transcript):
        words: JSONArray = [[w.text, w.start, w.end, w.probability] for w in result.words]
        return {
            "type": "Transcript",
            "text": result.text,
            "language": result.language,
            "words": words,
            "provider": result.provider,
            "details": _plain(result.details),
        }, None
    if isinstance(result, ChatResponse):
        return {
            "type": "ChatResponse",
            "text": result.text,
            "tool_calls": [dataclasses.asdict(call) for call in result.tool_calls],
            "parsed": result.parsed,
            "usage": dataclasses.asdict(result.usage),
            "model": result.model,
            "latency_s": result.latency_s,
            "audio_source": None if result.audio is None else result.audio.source,
        }, result.audio
    if isinstance(result, MOSResult):
        return {
            "type": "MOSResult",
            "overall": result.overall,
            "scores": _plain(result.scores),
            "model": result.model,
        }, None
    if isinstance(result, Audio):
        return {"type": "Audio", "audio_source": result.source}, result
    if isinstance(result, list) and all(isinstance(s, SpeechSegment) for s in result):
        return {"type": "SpeechSegments", "segments": [[s.start, s.end] for s in result]}, None
    raise TypeError(f"cannot cache a result of type {type(result).__name__}")


def decode_result(payload: dict[str, Any], audio: Audio | None) -> ProviderResult:
    """Inverse of ``encode_result`` (``audio`` is the stored WAV, if any)."""
    kind = payload.get("type")
    if kind == "Transcript":
        return Transcript(
            text=payload["text"],
            language=payload["language"],
            words=tuple(Word(t, s, e, p) for t, s, e, p in payload["words"]),
            provider=payload["provider"],
            details=payload["details"],
        )
    if kind == "ChatResponse":
        if payload["audio_source"] is not None and audio is None:
            raise ValueError("cached chat reply lost its audio file")
        return ChatResponse(
            text=payload["text"],
            tool_calls=tuple(ToolCall(**call) for call in payload["tool_calls"]),
            parsed=payload["parsed"],
            usage=Usage(**payload["usage"]),
            model=payload["model"],
            audio=_with_source(audio, payload["audio_source"]),
            latency_s=payload["latency_s"],
        )
    if kind == "MOSResult":
        return MOSResult(payload["overall"], payload["scores"], payload["model"])
    if kind == "Audio":
        if audio is None:
            raise ValueError("cached audio result lost its audio file")
        source = payload["audio_source"]
        return audio if source is None else Audio(audio.samples, audio.rate, source=source)
    if kind == "SpeechSegments":
        return [SpeechSegment(s, e) for s, e in payload["segments"]]
    raise ValueError(f"unknown cached result type {kind!r}")


def _with_source(audio: Audio | None, source: str | None) -> Audio | None:
    if audio is None or source is None:
        return audio
    return Audio(audio.samples, audio.rate, source=source)
