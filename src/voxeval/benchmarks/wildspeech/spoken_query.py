"""Single-turn spoken queries (WildSpeech protocol): the item schema and its validation.

A query is what a user says (``text``), its task category, a checklist that guides the LLM
judge, optional deterministic assertions checked on the reply transcript, and either a
recorded ``audio`` file or ``render`` instructions (prosody marks) for the TTS builder.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from voxeval.audio import ChannelMode

CATEGORIES: tuple[str, ...] = ("II", "SR", "OE", "TC", "PF")
CATEGORY_NAMES: dict[str, str] = {
    "II": "Information Inquiry",
    "SR": "Solution Request",
    "OE": "Opinion Exchange",
    "TC": "Text Creation",
    "PF": "Paralinguistic-Featured",
}
PF_SUBCATEGORIES: tuple[str, ...] = ("pause", "stress", "tone", "stutter", "near-homophone")
NOISE_CONDITIONS: tuple[str, ...] = ("clean", "natural_noise", "human_noise")
# The acoustic channel: speech in a room picked up from afar (``reverb``), or played through a
# loudspeaker and picked up again (``playback``). Built only when asked for.
ACOUSTIC_CONDITIONS: tuple[str, ...] = ("reverb", "playback")
# The same query and profile spoken by a formant synthesizer (espeak-ng or flite) instead of
# the natural voice, clean: how much a system depends on a human-like voice.
VOICE_CONDITIONS: tuple[str, ...] = ("synthetic_voice",)
CONDITIONS: tuple[str, ...] = NOISE_CONDITIONS + ACOUSTIC_CONDITIONS + VOICE_CONDITIONS
DEFAULT_CONDITIONS: tuple[str, ...] = NOISE_CONDITIONS
# Validation context that accepts a category outside CATEGORIES: a released dataset's unknown
# task type is kept as its own category (an authored suite must use the five codes).
OPEN_CATEGORIES: dict[str, bool] = {"open_categories": True}
_OWN_CATEGORY = re.compile(r"^[a-z0-9][a-z0-9\-]*$")

Category = Literal["II", "SR", "OE", "TC", "PF"]
Gender = Literal["male", "female"]
AgeBand = Literal["child", "adolescent", "adult", "senior"]

_WORD = re.compile(r"[A-Za-z0-9']+")


def words_of(text: str) -> list[str]:
    """The words of ``text`` as the renderer splits them (punctuation dropped)."""
    return _WORD.findall(text)


class SpeakerSpec(BaseModel):
    """Who speaks the query; the same fields as
    ``voxeval.providers.voices.voice_catalogue.SpeakerProfile``. Unset fields are free for the
    builder's grid to fill."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    gender: Gender | None = None
    age: AgeBand | None = None
    timbre: str | None = None
    accent: str | None = None


class ProsodyMark(BaseModel):
    """One prosodic event the renderer realises.

    - ``pause``: silence of ``ms`` after ``word``.
    - ``stress``: ``word`` spoken slower, louder and higher.
    - ``stutter``: the onset of ``word`` repeated ``repeats`` times before the word.
    - ``rise`` / ``fall``: pitch contour of the final stretch of the utterance
      (``word`` = first word of that stretch; default: the last word).

    ``occurrence`` picks the n-th appearance of ``word`` (1-based) when it repeats.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["pause", "stress", "stutter", "rise", "fall"]
    word: str | None = None
    occurrence: int = Field(default=1, ge=1)
    ms: int = Field(default=500, ge=50, le=3000, description="pause length")
    repeats: int = Field(default=2, ge=1, le=5, description="stutter onset repetitions")
    semitones: float = Field(default=3.0, ge=0.5, le=12.0, description="pitch change")

    @model_validator(mode="after")
    def _needs_word(self) -> ProsodyMark:
        if self.kind in ("pause", "stress", "stutter") and not self.word:
            raise ValueError(f"a {self.kind!r} mark needs 'word'")
        return self


class RenderSpec(BaseModel):
    """How the builder speaks the query: ``tts_text`` (default: the query text) and marks."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    tts_text: str | None = None
    marks: list[ProsodyMark] = Field(default_factory=list)


AssertionKind = Literal["require_any", "require_all", "number", "forbid"]


class Assertion(BaseModel):
    """A deterministic check on the reply transcript (scored without an LLM).

    - ``require_any``: at least one of ``values`` appears (fuzzy, ``threshold`` 0-100).
    - ``require_all``: every value appears.
    - ``number``: one of the numbers in ``values`` appears (digits or words), within
      ``tolerance`` (absolute).
    - ``forbid``: none of ``values`` appears (a wrong claim the reply must not make).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: AssertionKind
    values: list[str] = Field(min_length=1)
    threshold: float = Field(default=85.0, ge=50.0, le=100.0)
    tolerance: float = Field(default=0.0, ge=0.0)
    note: str = ""

    @model_validator(mode="after")
    def _numbers_parse(self) -> Assertion:
        if self.kind == "number":
            for value in self.values:
                try:
                    float(value.replace(",", ""))
                except ValueError:
                    raise ValueError(f"number assertion value {value!r} is not a number") from None
        return self


class SpokenQuery(BaseModel):
    """One benchmark item. ``audio`` is a path (relative to the suite file when loaded from
    one) to a recording; without it the builder renders ``text`` with ``render``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
    text: str = Field(min_length=1)
    category: str
    subcategory: str | None = None
    checklist: list[str] = Field(default_factory=list)
    assertions: list[Assertion] = Field(default_factory=list)
    speaker_profile: SpeakerSpec | None = None
    condition: str | None = None
    audio: str | None = None
    # how a multi-channel ``audio`` recording becomes mono; None: the suite's ``channels``
    channels: ChannelMode | None = None
    render: RenderSpec | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("category")
    @classmethod
    def _known_category(cls, value: str, info: ValidationInfo) -> str:
        if value in CATEGORIES:
            return value
        if (info.context or {}).get("open_categories") and _OWN_CATEGORY.match(value):
            return value
        raise ValueError(f"category must be one of {list(CATEGORIES)}, got {value!r}")

    @field_validator("subcategory")
    @classmethod
    def _pf_subcategory(cls, value: str | None, info: ValidationInfo) -> str | None:
        if info.data.get("category") == "PF" and value not in PF_SUBCATEGORIES:
            raise ValueError(
                f"PF queries need subcategory in {list(PF_SUBCATEGORIES)}, got {value!r}"
            )
        return value

    @field_validator("checklist")
    @classmethod
    def _non_empty_items(cls, value: list[str]) -> list[str]:
        if any(not item.strip() for item in value):
            raise ValueError("checklist entries must not be empty")
        return value

    @field_validator("condition")
    @classmethod
    def _known_condition(cls, value: str | None) -> str | None:
        if value is not None and value not in CONDITIONS:
            raise ValueError(f"condition must be one of {list(CONDITIONS)}")
        return value

    @field_validator("render")
    @classmethod
    def _marks_in_text(cls, value: RenderSpec | None, info: ValidationInfo) -> RenderSpec | None:
        if value is None or "text" not in info.data:
            return value
        spoken = [w.lower() for w in words_of(value.tts_text or info.data["text"])]
        for index, mark in enumerate(value.marks):
            if mark.word is not None and spoken.count(mark.word.lower()) < mark.occurrence:
                raise ValueError(
                    f"marks[{index}] ({mark.kind}): word {mark.word!r} (occurrence "
                    f"{mark.occurrence}) is not in the spoken text"
                )
        return value

    @property
    def spoken_text(self) -> str:
        """The text handed to the TTS engine."""
        if self.render is not None and self.render.tts_text:
            return self.render.tts_text
        return self.text

    @property
    def marks(self) -> list[ProsodyMark]:
        return list(self.render.marks) if self.render is not None else []

    @property
    def report_group(self) -> str:
        """``PF/pause`` for paralinguistic items, else the category."""
        return f"PF/{self.subcategory}" if self.category == "PF" else self.category
