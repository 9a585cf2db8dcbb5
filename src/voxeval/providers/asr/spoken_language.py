"""What a spoken-language identifier returns, and the protocol it implements.

The language is identified from the audio itself (the acoustic model's language-detection
probabilities), never guessed from a transcript: text heuristics mistake contractions for a
foreign language and foreign speech transcribed by an English-only model for English.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from voxeval.audio import Audio
from voxeval.json_types import JSONObject


@dataclass(frozen=True)
class SpokenLanguage:
    """``probabilities`` maps language codes (``"en"``, ``"es"``, ...) to probabilities; the
    most likely language is ``language`` with ``probability``."""

    language: str
    probability: float
    probabilities: dict[str, float] = field(default_factory=dict)
    model: str = ""

    def probability_of(self, code: str) -> float:
        return self.probabilities.get(base_language(code), 0.0)

    def top(self, n: int = 5) -> dict[str, float]:
        ranked = sorted(self.probabilities.items(), key=lambda kv: kv[1], reverse=True)
        return {lang: round(p, 4) for lang, p in ranked[:n]}


def base_language(code: str) -> str:
    """``"en-US"`` / ``"en_GB"`` -> ``"en"``: identifiers tell languages, not regions."""
    return code.replace("_", "-").split("-")[0].strip().lower()


# Language codes voxeval knows by name (prompts, voice profiles); others are passed through.
LANGUAGE_NAMES: dict[str, str] = {
    "en": "English",
    "es": "Spanish",
    "fr": "French",
    "de": "German",
    "it": "Italian",
    "pt": "Portuguese",
    "nl": "Dutch",
    "pl": "Polish",
    "ja": "Japanese",
    "zh": "Chinese",
}


def language_name(code: str) -> str:
    """``"es"`` -> ``"Spanish"``; an unknown code is returned as it is."""
    return LANGUAGE_NAMES.get(base_language(code), code)


@runtime_checkable
class LanguageIdentifier(Protocol):
    name: str

    def identity(self) -> JSONObject: ...

    def identify_language(self, audio: Audio) -> SpokenLanguage: ...
