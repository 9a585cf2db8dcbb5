"""k transcripts of a spoken reply, with the repeated-sentence hallucination filter.

A single ASR pass can mishear and unfairly sink a good reply, so the reply is transcribed k
times (default 3) by temperature sampling with distinct seeds; each transcript is judged and
the scores averaged. Whisper sometimes hallucinates loops of one sentence, so candidates with
>= 3 identical consecutive sentences are rejected (compared without case or punctuation, and
whether or not the sampler wrote the full stops); up to ``max_decodes`` (10) candidates are
decoded to find k clean ones. The first decode is greedy: it also serves WER and speaking rate.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from voxeval.atomic_files import write_record_json_atomic
from voxeval.audio import Audio
from voxeval.json_types import JSONObject, JSONReadObject, JSONReadValue
from voxeval.providers.base import ASR

TRANSCRIPTS_FILE = "transcripts.json"
# A sentence ends at . ! ? ; or an ellipsis (ASCII or CJK forms too), with or without a space
# after it, but not at the point of a decimal number ("3.5").
_SENTENCE_END = re.compile(r"(?:(?<!\d)[.]|[.](?!\d)|[!?;\u2026\u3002\uff01\uff1f\uff1b]|\n)+")
_WORD = re.compile(r"\w+(?:'\w+)?")
# A loop of a phrase this long or shorter is found even when no punctuation separates it.
_MAX_LOOP_WORDS = 40


@dataclass(frozen=True)
class TranscriptSettings:
    k: int = 3
    max_decodes: int = 10
    temperature: float = 0.5
    repeat_limit: int = 3
    language: str | None = "en"
    seed: int = 0


@dataclass(frozen=True)
class Candidate:
    text: str
    temperature: float
    seed: int | None
    rejected: bool


@dataclass(frozen=True)
class TranscriptSet:
    """``texts`` are the k transcripts used for scoring; ``greedy`` the temperature-0 decode.
    ``filled_with_rejected`` counts kept texts that failed the filter because fewer than k
    clean candidates existed (a reply that really repeats itself stays scoreable)."""

    texts: tuple[str, ...]
    greedy: str
    candidates: tuple[Candidate, ...]
    rejected: int
    filled_with_rejected: int
    settings: TranscriptSettings
    asr: dict[str, Any] = field(default_factory=dict)
    no_audio: bool = False

    def to_dict(self) -> dict[str, JSONReadValue]:
        # what ``asdict`` gives, built directly: it deep-copies field by field, ten times
        # slower, once per scored reply
        return {
            "texts": self.texts,
            "greedy": self.greedy,
            "candidates": tuple(
                {
                    "text": c.text,
                    "temperature": c.temperature,
                    "seed": c.seed,
                    "rejected": c.rejected,
                }
                for c in self.candidates
            ),
            "rejected": self.rejected,
            "filled_with_rejected": self.filled_with_rejected,
            "settings": {f.name: getattr(self.settings, f.name) for f in fields(self.settings)},
            "asr": copy.deepcopy(self.asr),
            "no_audio": self.no_audio,
        }

    @classmethod
    def from_dict(cls, data: JSONReadObject) -> TranscriptSet:
        """From ``transcripts.json``; ``KeyError``, ``TypeError`` or ``ValueError`` (naming
        the field) for a file of another layout, which the caller recomputes."""
        return cls(
            texts=tuple(_text(t, "texts") for t in _list(data["texts"], "texts")),
            greedy=_text(data["greedy"], "greedy"),
            candidates=tuple(_candidate(c) for c in _list(data["candidates"], "candidates")),
            rejected=_int(data["rejected"], "rejected"),
            filled_with_rejected=_int(data["filled_with_rejected"], "filled_with_rejected"),
            settings=_settings(data["settings"]),
            asr=dict(_object(data.get("asr") or {}, "asr")),
            no_audio=bool(data.get("no_audio", False)),
        )


# the keys a stored candidate and settings may have (their constructors take no others)
_CANDIDATE_FIELDS = frozenset(f.name for f in fields(Candidate))
_SETTINGS_FIELDS = frozenset(f.name for f in fields(TranscriptSettings))


def _text(value: JSONReadValue, where: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{TRANSCRIPTS_FILE}: {where}: expected text, got {value!r}")
    return value


def _int(value: JSONReadValue, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{TRANSCRIPTS_FILE}: {where}: expected an integer, got {value!r}")
    return value


def _number(value: JSONReadValue, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{TRANSCRIPTS_FILE}: {where}: expected a number, got {value!r}")
    return float(value)


def _list(value: JSONReadValue, where: str) -> Sequence[JSONReadValue]:
    if not isinstance(value, list):
        raise ValueError(f"{TRANSCRIPTS_FILE}: {where}: expected a list, got {value!r}")
    return value


def _object(
    value: JSONReadValue, where: str, allowed: frozenset[str] | None = None
) -> JSONReadObject:
    """A JSON object; with ``allowed`` (a dataclass's field names), only keys among them."""
    if not isinstance(value, Mapping):
        raise ValueError(f"{TRANSCRIPTS_FILE}: {where}: expected an object, got {value!r}")
    unknown = set(value) - allowed if allowed is not None else set()
    if unknown:
        raise TypeError(f"{TRANSCRIPTS_FILE}: {where}: unknown fields {sorted(unknown)}")
    return value


def _candidate(value: JSONReadValue) -> Candidate:
    c = _object(value, "candidates", _CANDIDATE_FIELDS)
    seed = c["seed"]
    return Candidate(
        text=_text(c["text"], "candidates.text"),
        temperature=_number(c["temperature"], "candidates.temperature"),
        seed=None if seed is None else _int(seed, "candidates.seed"),
        rejected=bool(c["rejected"]),
    )


def _settings(value: JSONReadValue) -> TranscriptSettings:
    d = _object(value, "settings", _SETTINGS_FIELDS)
    default = TranscriptSettings()
    language = d.get("language", default.language)
    return TranscriptSettings(
        k=_int(d.get("k", default.k), "settings.k"),
        max_decodes=_int(d.get("max_decodes", default.max_decodes), "settings.max_decodes"),
        temperature=_number(d.get("temperature", default.temperature), "settings.temperature"),
        repeat_limit=_int(d.get("repeat_limit", default.repeat_limit), "settings.repeat_limit"),
        language=None if language is None else _text(language, "settings.language"),
        seed=_int(d.get("seed", default.seed), "settings.seed"),
    )


def _sentence_key(sentence: str) -> str:
    return " ".join(_WORD.findall(sentence.lower()))


def _has_repeated_punctuated_sentences(text: str, limit: int) -> bool:
    sentences = [_sentence_key(s) for s in _SENTENCE_END.split(text)]
    sentences = [s for s in sentences if s]
    run = 1
    for prev, cur in itertools.pairwise(sentences):
        run = run + 1 if cur == prev else 1
        if run >= limit:
            return True
    return False


def _has_phrase_loop(words: list[str], limit: int) -> bool:
    """True when a phrase of >= 2 words occurs ``limit`` times back to back, punctuation or
    not ("Thank you, thank you thank you"). A phrase of n words repeated that way makes
    ``words[j] == words[j + n]`` hold for (limit - 1) * n consecutive positions j."""
    for n in range(2, min(_MAX_LOOP_WORDS, len(words) // limit) + 1):
        run = 0
        for j in range(len(words) - n):
            run = run + 1 if words[j] == words[j + n] else 0
            if run >= (limit - 1) * n:
                return True
    return False


def has_repeated_sentences(text: str, limit: int = 3) -> bool:
    """True when ``limit`` or more identical sentences follow each other. Case and
    punctuation do not matter: "Thank you. THANK YOU! thank you" and "thank you thank you
    thank you" are the same loop. A one-word sentence counts only where punctuation marks it
    off ("Yes. Yes. Yes."), so emphasis such as "very very very" is not a loop."""
    if _has_repeated_punctuated_sentences(text, limit):
        return True
    return _has_phrase_loop(_WORD.findall(text.lower()), limit)


def transcribe_k(
    asr: ASR, audio: Audio | None, settings: TranscriptSettings, asr_identity: JSONObject
) -> TranscriptSet:
    if audio is None or audio.is_empty():
        # Nothing was said: every transcript of it is the empty string.
        return TranscriptSet(("",), "", (), 0, 0, settings, asr_identity, no_audio=True)
    candidates: list[Candidate] = []
    for i in range(settings.max_decodes):
        temperature = 0.0 if i == 0 else settings.temperature
        # Distinct, small seeds (ctranslate2 takes a 32-bit unsigned seed).
        seed = None if i == 0 else (settings.seed * 16 + i) % 2**31
        text = asr.transcribe(
            audio, language=settings.language, temperature=temperature, seed=seed
        ).text.strip()
        rejected = has_repeated_sentences(text, settings.repeat_limit)
        candidates.append(Candidate(text, temperature, seed, rejected))
        if sum(not c.rejected for c in candidates) >= settings.k:
            break
    kept = [c.text for c in candidates if not c.rejected][: settings.k]
    filled = 0
    for c in candidates:
        if len(kept) >= settings.k:
            break
        if c.rejected:
            kept.append(c.text)
            filled += 1
    return TranscriptSet(
        texts=tuple(kept),
        greedy=candidates[0].text,
        candidates=tuple(candidates),
        rejected=sum(c.rejected for c in candidates),
        filled_with_rejected=filled,
        settings=settings,
        asr=asr_identity,
    )


def load_transcripts(
    unit_dir: Path, settings: TranscriptSettings, asr_identity: JSONObject
) -> TranscriptSet | None:
    """The stored set when it was made with the same ASR and settings, else None."""
    path = unit_dir / TRANSCRIPTS_FILE
    if not path.is_file():
        return None
    try:
        stored = TranscriptSet.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, KeyError, TypeError):
        return None  # unreadable (e.g. an older layout): recompute
    same_asr = stored.asr == json.loads(json.dumps(asr_identity, default=str))
    if stored.settings != settings or (not same_asr and not stored.no_audio):
        return None
    return stored


def save_transcripts(unit_dir: Path, transcripts: TranscriptSet) -> Path:
    path = unit_dir / TRANSCRIPTS_FILE
    write_record_json_atomic(path, transcripts.to_dict())
    return path
