"""Options of the suite builder and the speaker-profile grid they select."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from voxeval.audio.loudspeaker import DEVICE_PRESETS
from voxeval.audio.room_acoustics import ROOM_PRESETS, RoomSetup, design, room_setup
from voxeval.benchmarks.wildspeech.spoken_query import CONDITIONS, DEFAULT_CONDITIONS, SpeakerSpec
from voxeval.config import format_validation_error
from voxeval.errors import AudioError, ConfigError
from voxeval.json_types import JSONReadObject
from voxeval.providers.voices.voice_catalogue import AGES as AGES
from voxeval.providers.voices.voice_catalogue import (
    GENDERS,
    NATURAL_ENGINES,
    TIMBRES,
    profile_fields,
)

# Profiles in an order where every prefix is as diverse as possible (both genders first,
# then age bands, then timbres), so ``profiles: N`` takes a balanced subset.
_AGE_ORDER = ("adult", "senior", "child", "adolescent")
PROFILE_GRID: tuple[SpeakerSpec, ...] = tuple(
    SpeakerSpec.model_validate(
        {
            "gender": GENDERS[i % 2],
            "age": _AGE_ORDER[(i // 2) % 4],
            "timbre": TIMBRES[((i // 2) + i // 8) % 2],
        }
    )
    for i in range(16)
)
DEFAULT_NOISE_RATIO = 0.5  # WildSpeech: noise amplitude 0.5 against speech 1.0


def profile_label(spec: SpeakerSpec) -> str:
    """``female-adult-bright`` (unset fields are left out; ``recorded`` when all are unset)."""
    parts = [p for p in (spec.gender, spec.age, spec.timbre, spec.accent) if p]
    return "-".join(parts) or "recorded"


def parse_profile_label(text: str) -> SpeakerSpec:
    fields = profile_fields(text, text.replace(",", "-").split("-"), "profile")
    return SpeakerSpec.model_validate(fields)


class BuildOptions(BaseModel):
    """How a suite is rendered. Also the ``build:`` section of a run config, where ``dir``
    names a prebuilt (or to-be-built) folder instead of ``<run_dir>/suite_audio``."""

    model_config = ConfigDict(extra="forbid")
    dir: str | None = None
    profiles: int | Literal["all"] | list[str] = Field(
        default=4, description="first N of the balanced grid, 'all' (16), or labels"
    )
    assign: Literal["cross", "rotate"] = Field(
        default="cross",
        description="cross: every query x every profile; rotate: one profile per query in turn",
    )
    voice_choice: Literal["balanced", "closest"] = Field(
        default="balanced",
        description="balanced: voices chosen over all profiles so that no profile dimension is "
        "confounded with the TTS engine; closest: the closest voice per profile on its own",
    )
    conditions: list[str] = Field(default_factory=lambda: list(DEFAULT_CONDITIONS))
    noise_ratio: float | None = Field(default=None, gt=0.0, le=4.0)
    snr_db: float | None = Field(default=None, ge=-20.0, le=60.0)
    seed: int = Field(default=0, ge=0, strict=True)
    limit: int | None = Field(default=None, ge=1)
    per_category: int | None = Field(
        default=None,
        ge=1,
        description="keep the first N queries of each category (PF: of each subcategory)",
    )
    engines: list[str] = Field(
        default_factory=lambda: list(NATURAL_ENGINES),
        description="TTS engines the profiles' voices come from: the neural ones by default; "
        "espeak/flite (formant synthesizers) when named, or as the synthetic_voice condition",
    )
    noise_dirs: list[str] = Field(default_factory=list)
    generated_noise: Literal["fallback", "mix", "only"] = "fallback"
    rate: int = Field(default=16000, ge=8000, le=48000)
    deterministic_tts: bool = Field(
        default=True,
        description="turn off engine sampling noise (Piper); when on, it is drawn from the seed",
    )
    room: str = Field(default="living_room", description="room of the 'reverb' condition")
    rt60_s: float | None = Field(default=None, description="reverb: RT60 instead of the room's")
    distance_m: float | None = Field(
        default=None, description="reverb: talker-microphone distance instead of the room's"
    )
    device: str = Field(default="phone", description="loudspeaker of the 'playback' condition")
    playback_room: str | None = Field(
        default="small_office",
        description="playback: room the loudspeaker is recaptured in (null: none)",
    )
    room_placements: int = Field(
        default=8,
        ge=1,
        le=64,
        description="talker/microphone placements drawn per acoustic condition; each item "
        "uses one of them",
    )

    @field_validator("conditions")
    @classmethod
    def _known_conditions(cls, value: list[str]) -> list[str]:
        bad = [c for c in value if c not in CONDITIONS]
        if bad:
            raise ValueError(f"unknown conditions {bad}; known: {list(CONDITIONS)}")
        if not value:
            raise ValueError("at least one condition is needed")
        return list(dict.fromkeys(value))

    @model_validator(mode="after")
    def _one_level(self) -> BuildOptions:
        if self.noise_ratio is not None and self.snr_db is not None:
            raise ValueError("give either noise_ratio or snr_db, not both")
        return self

    @model_validator(mode="after")
    def _acoustics(self) -> BuildOptions:
        if self.device not in DEVICE_PRESETS:
            raise ValueError(f"device {self.device!r} is unknown; known: {list(DEVICE_PRESETS)}")
        if self.playback_room is not None and self.playback_room not in ROOM_PRESETS:
            raise ValueError(
                f"playback_room {self.playback_room!r} is unknown; known: {list(ROOM_PRESETS)}"
            )
        try:
            reverb = self.reverb_room()
            if "reverb" in self.conditions:
                design(reverb)  # an RT60 the room cannot have is refused before building
        except AudioError as exc:
            raise ValueError(str(exc)) from exc
        return self

    def reverb_room(self) -> RoomSetup:
        """The room of the ``reverb`` condition (``room`` with ``rt60_s`` / ``distance_m``)."""
        return room_setup(self.room, rt60_s=self.rt60_s, distance_m=self.distance_m)

    def recapture_room(self) -> RoomSetup | None:
        """The room the ``playback`` condition is recaptured in (None: straight from the
        loudspeaker's output)."""
        return room_setup(self.playback_room) if self.playback_room else None

    @property
    def ratio(self) -> float | None:
        """The amplitude ratio in use (None when an SNR is given)."""
        if self.snr_db is not None:
            return None
        return self.noise_ratio if self.noise_ratio is not None else DEFAULT_NOISE_RATIO

    def profile_specs(self) -> list[SpeakerSpec]:
        if self.profiles == "all":
            return list(PROFILE_GRID)
        if isinstance(self.profiles, int):
            if not 1 <= self.profiles <= len(PROFILE_GRID):
                raise ConfigError(f"build: profiles must be 1-{len(PROFILE_GRID)} or 'all'")
            return list(PROFILE_GRID[: self.profiles])
        return [parse_profile_label(label) for label in self.profiles]


def parse_build_options(data: JSONReadObject | None, where: str = "build") -> BuildOptions:
    try:
        return BuildOptions.model_validate(data or {})
    except ValidationError as exc:
        raise ConfigError(format_validation_error(where, exc)) from exc
