"""Word errors of a hypothesis against a reference after normalising both the same way."""

from __future__ import annotations

from dataclasses import dataclass

import jiwer

from voxeval.scoring.text.text_normaliser import normaliser_for


@dataclass(frozen=True)
class WordErrors:
    """Edit counts (jiwer's alignment) over the normalised texts."""

    reference: str
    hypothesis: str
    substitutions: int
    deletions: int
    insertions: int

    @property
    def ref_words(self) -> int:
        return len(self.reference.split())

    @property
    def errors(self) -> int:
        return self.substitutions + self.deletions + self.insertions

    @property
    def wer(self) -> float | None:
        """Errors per reference word; None when the reference has no words (undefined)."""
        return self.errors / self.ref_words if self.ref_words else None


def word_errors(reference: str, hypothesis: str, language: str | None = "en") -> WordErrors:
    """Normalise both texts with the normaliser of ``language`` and align them."""
    normalise = normaliser_for(language)
    ref, hyp = normalise(reference), normalise(hypothesis)
    if not ref:
        return WordErrors(ref, hyp, 0, 0, len(hyp.split()))
    out = jiwer.process_words(ref, hyp)
    return WordErrors(ref, hyp, out.substitutions, out.deletions, out.insertions)
