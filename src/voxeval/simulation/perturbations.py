"""Caller-side perturbations and the conditions built from them.

A perturbation changes only the caller: its voice (``accent``), its behaviour and speech rate
(``persona``), or the audio the agent receives (``noise``, ``connection``, ``reverb``,
``playback``). Perturbations are registered as ``@PERTURBATIONS.register(NAME)``, compose
freely (in the order listed) and are seeded: the same run seed gives the same noise, packet
losses, gains and room placements.

Config (``perturbations:`` in the run config) — each entry is one condition, run next to
``clean``; a composition lists several perturbations under ``apply``:

    perturbations:
      - {name: noise, environment: street, snr_db: 15}
      - {name: accent, accent: scottish, gender: female}
      - condition: noisy-line
        apply: [{name: noise, environment: coffee_shop}, {name: connection}]
      - condition: far-field
        apply: [{name: reverb, room: living_room, distance_m: 3}, {name: noise}]

A perturbation class inherits ``PerturbationBase`` and defines ``label`` and ``apply``. It
overrides ``per_call = True`` when one placement holds for the whole call (a room: the same
seed for every utterance), and defines ``line_effect(seed)`` (``LineEffectPerturbation``) when
in a call it acts on the caller's whole line instead of on each utterance (noise, connection).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

from voxeval.audio import Audio, degrade_connection, mix_at_snr
from voxeval.audio.loudspeaker import device_preset, play_through
from voxeval.audio.noise_environments import ENVIRONMENTS, environment_noise
from voxeval.audio.room_acoustics import (
    RoomSetup,
    Tail,
    design,
    reverberate,
    room_response,
    room_setup,
)
from voxeval.errors import AudioError, ConfigError, UnknownComponent
from voxeval.json_types import JSONReadValue
from voxeval.registry import Kind
from voxeval.simulation.line import ContinuousNoise, LineConnection, LineEffect
from voxeval.simulation.personas import PERSONAS


class Perturbation(Protocol):
    label: str

    @property
    def per_call(self) -> bool:
        """One seed for the whole call (True) or a seed per caller utterance (False)."""
        ...

    def apply(self, audio: Audio, seed: int) -> Audio:
        """The caller's audio as the agent receives it (identity for voice/persona changes)."""
        ...


@runtime_checkable
class LineEffectPerturbation(Protocol):
    """A perturbation that, in a call, acts on the caller's whole line (between turns too)
    rather than on each utterance; ``apply`` still serves single-turn rendering."""

    def line_effect(self, seed: int) -> LineEffect: ...


class PerturbationBase:
    """The default of the optional member: seeded per caller utterance."""

    per_call: ClassVar[bool] = False


# Perturbation classes by name; a condition entry's other fields are the constructor options.
PERTURBATIONS: Kind[type[Perturbation]] = Kind("perturbation")


@PERTURBATIONS.register("noise")
class NoisePerturbation(PerturbationBase):
    def __init__(self, environment: str = "coffee_shop", snr_db: float = 15.0) -> None:
        if environment not in ENVIRONMENTS:
            raise ConfigError(
                f"perturbation noise: environment {environment!r}; known: {', '.join(ENVIRONMENTS)}"
            )
        self.environment, self.snr_db = environment, float(snr_db)
        self.label = f"noise-{environment}-{self.snr_db:g}db"

    def apply(self, audio: Audio, seed: int) -> Audio:
        if audio.is_empty():
            return audio
        noise = environment_noise(self.environment, audio.duration, rate=audio.rate, seed=seed)
        return mix_at_snr(audio, noise, self.snr_db, seed=seed)

    def line_effect(self, seed: int) -> LineEffect:
        """In a call the noise runs for the whole call on the caller's line."""
        return ContinuousNoise(self.environment, self.snr_db, seed)


@PERTURBATIONS.register("connection")
class ConnectionPerturbation(PerturbationBase):
    """mu-law codec round trip, packet loss per 20 ms frame, random gain (EVA defaults)."""

    def __init__(
        self, loss_rate: float = 0.03, gain_low: float = 0.5, gain_high: float = 1.2
    ) -> None:
        self.loss_rate, self.gain_low, self.gain_high = loss_rate, gain_low, gain_high
        self.label = "connection"

    def apply(self, audio: Audio, seed: int) -> Audio:
        if audio.is_empty():
            return audio
        return degrade_connection(
            audio,
            seed=seed,
            loss_rate=self.loss_rate,
            gain_low=self.gain_low,
            gain_high=self.gain_high,
        )

    def line_effect(self, seed: int) -> LineEffect:
        """In a call the whole caller line goes through the degraded connection."""
        return LineConnection(self.loss_rate, self.gain_low, self.gain_high, seed)


def _room(
    name: str, room: str, rt60_s: float | None, distance_m: float | None, tail: str
) -> RoomSetup:
    if tail not in ("keep", "cut"):
        raise ConfigError(f"perturbation {name}: tail must be 'keep' or 'cut', not {tail!r}")
    try:
        setup = room_setup(room, rt60_s=rt60_s, distance_m=distance_m)
        design(setup)  # refused here, at plan time, rather than in the middle of a call
        return setup
    except AudioError as exc:
        raise ConfigError(f"perturbation {name}: {exc}") from exc


def _room_label(room: str, rt60_s: float | None, distance_m: float | None) -> str:
    parts = [room]
    if rt60_s is not None:
        parts.append(f"{float(rt60_s):g}s")
    if distance_m is not None:
        parts.append(f"{float(distance_m):g}m")
    return "-".join(parts)


@PERTURBATIONS.register("reverb")
class ReverbPerturbation(PerturbationBase):
    """The caller talks in a room and the phone's microphone is ``distance_m`` away (far-field
    pickup): a simulated room impulse response (``voxeval.audio.room_acoustics``)."""

    # The caller does not move during a call: one placement per call, not per utterance.
    per_call = True

    def __init__(
        self,
        room: str = "living_room",
        rt60_s: float | None = None,
        distance_m: float | None = None,
        tail: Tail = "keep",
    ) -> None:
        self.setup = _room("reverb", room, rt60_s, distance_m, tail)
        self.tail: Tail = tail
        self.label = f"reverb-{_room_label(room, rt60_s, distance_m)}"

    def apply(self, audio: Audio, seed: int) -> Audio:
        if audio.is_empty():
            return audio
        return reverberate(audio, room_response(self.setup, audio.rate, seed), tail=self.tail)


@PERTURBATIONS.register("playback")
class PlaybackPerturbation(PerturbationBase):
    """The caller's voice is played through a loudspeaker (``device``) and picked up again by
    a microphone in ``room`` (``room: none`` for no room): ``voxeval.audio.loudspeaker``."""

    per_call = True

    def __init__(
        self,
        device: str = "phone",
        room: str | None = "small_office",
        rt60_s: float | None = None,
        distance_m: float | None = None,
        tail: Tail = "keep",
    ) -> None:
        try:
            device_preset(device)
        except AudioError as exc:
            raise ConfigError(f"perturbation playback: {exc}") from exc
        self.device = device
        self.room = None if room in (None, "none") else str(room)
        if self.room is None and (rt60_s is not None or distance_m is not None):
            raise ConfigError("perturbation playback: rt60_s and distance_m need a room")
        self.setup = _room("playback", self.room, rt60_s, distance_m, tail) if self.room else None
        self.tail: Tail = tail
        where = f"-{_room_label(self.room, rt60_s, distance_m)}" if self.room else ""
        self.label = f"playback-{device}{where}"

    def apply(self, audio: Audio, seed: int) -> Audio:
        if audio.is_empty():
            return audio
        played = play_through(audio, self.device)
        if self.setup is None:
            return played
        return reverberate(played, room_response(self.setup, audio.rate, seed), tail=self.tail)


@PERTURBATIONS.register("accent")
class AccentPerturbation(PerturbationBase):
    """The caller speaks with another voice: ``voice`` (``engine:voice``) or the closest voice
    of the catalogue for ``accent`` and ``gender``."""

    def __init__(self, accent: str | None = None, gender: str = "female", voice: str | None = None):
        if not accent and not voice:
            raise ConfigError("perturbation accent: give 'accent' (e.g. scottish) or 'voice'")
        self.accent, self.gender, self.voice = accent, gender, voice
        self.label = f"accent-{voice or accent}"

    def voice_spec(self) -> str:
        return self.voice or f"{self.gender},adult,{self.accent}"

    def apply(self, audio: Audio, seed: int) -> Audio:
        return audio


@PERTURBATIONS.register("persona")
class PersonaPerturbation(PerturbationBase):
    def __init__(self, persona: str) -> None:
        if persona not in PERSONAS:
            raise ConfigError(
                f"perturbation persona: unknown {persona!r}; known: {sorted(PERSONAS)}"
            )
        self.persona = persona
        self.label = f"persona-{persona}"

    def apply(self, audio: Audio, seed: int) -> Audio:
        return audio


@dataclass(frozen=True)
class Condition:
    """A named set of perturbations applied together (``clean`` has none)."""

    name: str
    perturbations: tuple[Perturbation, ...] = ()
    spec: list[JSONReadValue] = field(default_factory=list)

    @property
    def persona(self) -> str | None:
        found = [p.persona for p in self.perturbations if isinstance(p, PersonaPerturbation)]
        return found[-1] if found else None

    @property
    def voice(self) -> str | None:
        found = [p.voice_spec() for p in self.perturbations if isinstance(p, AccentPerturbation)]
        return found[-1] if found else None

    def transform(self, seed: int) -> CallerAudioTransform | None:
        """Per-utterance audio perturbations (those that do not act on the whole line)."""
        voice_only = AccentPerturbation | PersonaPerturbation
        audio_ops = [
            p for p in self.perturbations if not isinstance(p, voice_only | LineEffectPerturbation)
        ]
        return CallerAudioTransform(audio_ops, seed) if audio_ops else None

    def line_effects(self, seed: int) -> list[LineEffect]:
        """Perturbations of the caller's whole line in a call (continuous noise, connection),
        in the order listed, each seeded from (``seed``, its position)."""
        makers: list[Callable[[int], LineEffect]] = [
            p.line_effect for p in self.perturbations if isinstance(p, LineEffectPerturbation)
        ]
        seeds = np.random.SeedSequence([seed, 7]).generate_state(max(1, len(makers)))
        return [make(int(s)) for make, s in zip(makers, seeds, strict=False)]


class CallerAudioTransform:
    """Applies audio perturbations to each caller utterance in turn; utterance ``k`` of a call
    uses seeds derived from (call seed, k, perturbation index), so runs repeat exactly. A
    perturbation with ``per_call = True`` (a room: the caller stays where they are) gets one
    seed for the whole call, derived from (call seed, perturbation index) in its own stream."""

    def __init__(self, perturbations: Sequence[Perturbation], seed: int) -> None:
        self.perturbations = list(perturbations)
        self.seed = seed
        self.count = 0
        self.call_seeds = np.random.SeedSequence(seed, spawn_key=(0,)).generate_state(
            len(self.perturbations)
        )

    def __call__(self, audio: Audio) -> Audio:
        seeds = np.random.SeedSequence([self.seed, self.count]).generate_state(
            len(self.perturbations)
        )
        self.count += 1
        for i, p in enumerate(self.perturbations):
            seed = self.call_seeds[i] if p.per_call else seeds[i]
            audio = p.apply(audio, int(seed))
        return audio


def build_perturbation(spec: JSONReadValue, where: str) -> Perturbation:
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
        raise ConfigError(f"{where}: a perturbation needs a 'name' ({', '.join(_known())})")
    options = {k: v for k, v in spec.items() if k != "name"}
    try:
        cls = PERTURBATIONS.lookup(spec["name"])
    except UnknownComponent as exc:
        raise ConfigError(f"{where}: {exc}") from exc
    try:
        return cls(**options)
    except TypeError as exc:
        raise ConfigError(f"{where}: perturbation {spec['name']!r}: bad options ({exc})") from exc


def _known() -> list[str]:

    return PERTURBATIONS.names()


def parse_conditions(
    entries: Sequence[JSONReadValue], where: str = "perturbations"
) -> list[Condition]:
    """``clean`` plus one condition per entry (see the module docstring)."""
    conditions = [Condition("clean")]
    for n, entry in enumerate(entries):
        here = f"{where}.{n}"
        if isinstance(entry, dict) and "apply" in entry:
            specs = entry["apply"]
            if not isinstance(specs, list) or not specs:
                raise ConfigError(f"{here}.apply: expected a non-empty list of perturbations")
            parts = tuple(build_perturbation(s, f"{here}.apply.{i}") for i, s in enumerate(specs))
            name = str(entry.get("condition") or "+".join(p.label for p in parts))
        else:
            if not isinstance(entry, dict):
                raise ConfigError(f"{here}: expected a mapping with a perturbation 'name'")
            spec = {k: v for k, v in entry.items() if k != "condition"}
            specs = [spec]
            parts = (build_perturbation(spec, here),)
            name = str(entry.get("condition") or parts[0].label)
        if any(c.name == name for c in conditions):
            raise ConfigError(f"{here}: condition {name!r} appears twice; set 'condition:' names")
        conditions.append(Condition(name, parts, list(specs)))
    return conditions
