"""Is the reply spoken in the query's language? Decided from the reply audio by a spoken-
language identifier (the multilingual Whisper base by default), not from a transcript.

The rule gives the reply the benefit of the doubt: it is off-language only when another
language is the most likely one *and* the expected language is unlikely. Robotic or accented
English can spread Whisper's probability over several languages (espeak English: en 0.46,
nn 0.28) while a Spanish or French reply leaves English near 0.01-0.02.
"""

from __future__ import annotations

from dataclasses import dataclass

from voxeval.json_types import JSONReadValue
from voxeval.providers.asr.spoken_language import SpokenLanguage, base_language

# Below this probability of the expected language (and another language on top), the reply
# is not in the expected language.
EXPECTED_LANGUAGE_FLOOR = 0.1


@dataclass(frozen=True)
class LanguageVerdict:
    expected: str
    detected: SpokenLanguage

    @property
    def expected_probability(self) -> float:
        return self.detected.probability_of(self.expected)

    @property
    def in_expected_language(self) -> bool:
        if self.detected.language == base_language(self.expected):
            return True
        return self.expected_probability >= EXPECTED_LANGUAGE_FLOOR

    def reason(self) -> str:
        """Why the reply is off-language (only meaningful when it is)."""
        return (
            f"the reply is spoken in {self.detected.language!r} "
            f"(p={self.detected.probability:.2f}), not in the query's language "
            f"{self.expected!r} (p={self.expected_probability:.2f})"
        )

    def details(self) -> dict[str, JSONReadValue]:
        return {
            "expected": self.expected,
            "detected": self.detected.language,
            "detected_probability": round(self.detected.probability, 4),
            "expected_probability": round(self.expected_probability, 4),
            "in_expected_language": self.in_expected_language,
            "floor": EXPECTED_LANGUAGE_FLOOR,
            "top_languages": self.detected.top(),
            "model": self.detected.model,
        }
