"""Room reverberation and far-field pickup from simulated room impulse responses.

A room is a shoebox (pyroomacoustics' image-source model) with one uniform wall absorption.
Each response is drawn from a seed: the talker stands or sits at a random place inside the
room, and the microphone is at the given distance from the talker in a random direction, so
two seeds give two placements in the same room. Nothing else is random.

* **RT60.** ``pyroomacoustics.inverse_sabine`` turns the target RT60 into an absorption
  coefficient and an image order. In a shoebox the decay measured on the response comes out
  longer than Sabine's formula says (the waves running between the two farthest walls meet
  fewer walls and decay last), by up to 25 % for the presets here, so the absorption is
  corrected from the measured T30 (``measure_rt60``) until the measured RT60 is within
  ``RT60_TOLERANCE`` of the target (at most ``CALIBRATION_STEPS`` corrections). The measured
  value is kept with the response.
* **Alignment.** The propagation delay from talker to microphone is removed, so the direct
  sound arrives when the dry sound did. The response keeps the ``FRACTIONAL_DELAY_LEAD``
  samples in front of the direct sound that pyroomacoustics' fractional-delay filter needs
  (40 samples: 2.5 ms at 16 kHz); reverberant speech lags the dry speech by that much.
* **Length.** The response is cut where its energy decay curve (Schroeder backward
  integration) has fallen 60 dB; what follows is numerical dust.
* **Level.** The response is scaled to unit energy (``sum(h**2) == 1``), which keeps the power
  of a white signal exactly and of speech within a few dB: a far-field talker is not quieter,
  as behind a microphone with automatic gain, but sounds distant (less direct sound, more
  room). If the result would exceed full scale it is scaled down as a whole to a peak of
  ``HEADROOM_PEAK``, as the mixers do.
* **Output length.** ``tail="keep"`` (the default) keeps the room's ring-out after the last
  sample, so the output is longer than the input by the response length minus one sample:
  a microphone records the decay, and cutting it would end the last word abruptly, which no
  room does. ``tail="cut"`` keeps the input's length when timing must not change.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from types import ModuleType
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import signal

from voxeval.audio.checks import require_range, require_samples
from voxeval.audio.mix import limit_peak
from voxeval.audio.value import Audio
from voxeval.errors import AudioError
from voxeval.json_types import JSONObject

SPEED_OF_SOUND = 343.0  # m/s, the value pyroomacoustics uses by default
FRACTIONAL_DELAY_LEAD = 40  # half of pyroomacoustics' 81-tap fractional-delay filter
RT60_TOLERANCE = 0.05  # relative: calibration stops when measured RT60 is this close
CALIBRATION_STEPS = 3
MAX_ABSORPTION = 0.99
MIN_RT60_S, MAX_RT60_S = 0.05, 3.0
# The image-source model's cost grows with the cube of the image order, which grows with
# RT60 / room size: order 150 takes about 5 s on one core. Beyond it the setup is refused.
MAX_IMAGE_ORDER = 150
DECAY_FLOOR_DB = 60.0  # the response is cut where its energy decay reaches -60 dB
DIRECT_WINDOW_MS = 2.5  # half-width of the direct-sound window of the DRR
_PLACEMENT_TRIES = 1000

Tail = Literal["keep", "cut"]


@dataclass(frozen=True)
class RoomPreset:
    """A named room: inner dimensions (length, width, height in m), reverberation time, and the
    usual talker-microphone distance and heights (ranges the placement is drawn from)."""

    name: str
    dimensions_m: tuple[float, float, float]
    rt60_s: float
    distance_m: float
    talker_height_m: tuple[float, float]
    mic_height_m: tuple[float, float]
    wall_margin_m: float
    description: str


ROOM_PRESETS: dict[str, RoomPreset] = {
    p.name: p
    for p in (
        RoomPreset(
            "car",
            (2.5, 1.5, 1.2),
            0.08,
            0.6,
            (0.85, 1.0),
            (0.9, 1.05),
            0.2,
            "car cabin, hands-free microphone near the mirror; upholstery absorbs most sound",
        ),
        RoomPreset(
            "small_office",
            (4.0, 3.5, 2.7),
            0.4,
            1.0,
            (1.1, 1.3),
            (0.75, 0.95),
            0.5,
            "furnished office, seated talker, laptop microphone on the desk",
        ),
        RoomPreset(
            "living_room",
            (5.5, 4.5, 2.6),
            0.5,
            2.5,
            (1.1, 1.7),
            (0.7, 1.2),
            0.5,
            "sofa and curtains, smart speaker across the room",
        ),
        RoomPreset(
            "meeting_room",
            (7.0, 5.0, 3.0),
            0.7,
            3.0,
            (1.1, 1.3),
            (0.75, 0.8),
            0.6,
            "hard-walled meeting room, speakerphone on the table",
        ),
        RoomPreset(
            "hall",
            (20.0, 15.0, 8.0),
            1.5,
            6.0,
            (1.5, 1.7),
            (1.0, 1.5),
            1.0,
            "large hall or atrium with hard surfaces, standing talker, distant microphone",
        ),
    )
}


@dataclass(frozen=True)
class RoomSetup:
    """A preset with its RT60 and distance possibly overridden."""

    room: str
    dimensions_m: tuple[float, float, float]
    rt60_s: float
    distance_m: float
    talker_height_m: tuple[float, float]
    mic_height_m: tuple[float, float]
    wall_margin_m: float

    def describe(self) -> JSONObject:
        return {
            "room": self.room,
            "dimensions_m": list(self.dimensions_m),
            "rt60_s": self.rt60_s,
            "distance_m": self.distance_m,
        }


def room_setup(
    room: str = "living_room", *, rt60_s: float | None = None, distance_m: float | None = None
) -> RoomSetup:
    """The preset ``room`` with ``rt60_s`` / ``distance_m`` replaced when given (validated:
    the distance is at most the room's width less the wall margins)."""
    preset = ROOM_PRESETS.get(room)
    if preset is None:
        raise AudioError(f"room acoustics: unknown room {room!r}; known: {', '.join(ROOM_PRESETS)}")
    where = f"room {room!r}"
    rt60 = require_range(
        preset.rt60_s if rt60_s is None else rt60_s, "rt60_s", where, MIN_RT60_S, MAX_RT60_S
    )
    margin = preset.wall_margin_m
    # Up to the room's inner width: any talker position then has room for the microphone.
    widest = min(preset.dimensions_m[:2]) - 2 * margin
    distance = require_range(
        preset.distance_m if distance_m is None else distance_m,
        "distance_m",
        where,
        0.1,
        round(widest, 2),
    )
    return RoomSetup(
        room,
        preset.dimensions_m,
        rt60,
        distance,
        preset.talker_height_m,
        preset.mic_height_m,
        margin,
    )


@dataclass(frozen=True, eq=False)
class RoomResponse:
    """One simulated impulse response (aligned, cut and unit-energy; see the module notes)."""

    setup: RoomSetup
    rate: int
    seed: int
    talker_m: tuple[float, float, float]
    mic_m: tuple[float, float, float]
    absorption: float
    max_order: int
    ir: npt.NDArray[np.float64]
    measured_rt60_s: float
    drr_db: float

    def describe(self) -> JSONObject:
        """What a manifest or a call record keeps about the room."""
        return {
            **self.setup.describe(),
            "seed": self.seed,
            "talker_m": [round(v, 3) for v in self.talker_m],
            "mic_m": [round(v, 3) for v in self.mic_m],
            "absorption": round(self.absorption, 4),
            "max_order": self.max_order,
            "measured_rt60_s": round(self.measured_rt60_s, 3),
            "drr_db": round(self.drr_db, 2),
            "ir_s": round(self.ir.size / self.rate, 3),
        }


def _pyroomacoustics() -> ModuleType:
    # Imported on first use: the import alone takes about a second.
    try:
        import pyroomacoustics as pra
    except ImportError as exc:
        raise AudioError(
            f"simulated rooms need pyroomacoustics, which is not installed ({exc}); "
            "install the rooms extra: pip install 'voxeval[rooms]'"
        ) from None

    # One thread: the image sums are then added in one fixed order (same seed, same bytes on
    # any machine), and the machine's cores stay with the calls running in parallel.
    pra.constants.set("num_threads", 1)
    return pra


def place(setup: RoomSetup, seed: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Talker and microphone positions (m) drawn from ``seed``: the talker anywhere at least
    the wall margin from the walls, the microphone ``distance_m`` away in a random direction
    at a height drawn from its range, also within the margin."""
    rng = np.random.default_rng(seed)
    dims = np.asarray(setup.dimensions_m, dtype=np.float64)
    margin = setup.wall_margin_m
    lo, hi = np.full(3, margin), dims - margin
    for _ in range(_PLACEMENT_TRIES):
        talker = np.array(
            [
                rng.uniform(lo[0], hi[0]),
                rng.uniform(lo[1], hi[1]),
                rng.uniform(*setup.talker_height_m),
            ]
        )
        mic_z = rng.uniform(*setup.mic_height_m)
        rise = mic_z - talker[2]
        if abs(rise) >= setup.distance_m:
            continue
        across = math.sqrt(setup.distance_m**2 - rise**2)
        angle = rng.uniform(0.0, 2.0 * math.pi)
        mic = talker + np.array([across * math.cos(angle), across * math.sin(angle), rise])
        if np.all(mic[:2] >= lo[:2]) and np.all(mic[:2] <= hi[:2]):
            return talker, mic
    raise AudioError(
        f"room {setup.room!r}: no placement {setup.distance_m} m apart found within the walls"
    )


def measure_rt60(ir: npt.ArrayLike, rate: int) -> float:
    """RT60 (s) of an impulse response from its T30: the time the Schroeder energy decay takes
    from -5 to -35 dB, doubled (pyroomacoustics' ``measure_rt60``)."""
    pra = _pyroomacoustics()
    value = float(pra.experimental.measure_rt60(np.asarray(ir, dtype=np.float64), rate, 30))
    if not math.isfinite(value) or value <= 0:
        raise AudioError(f"measure_rt60: the response does not decay by 35 dB ({value})")
    return value


def energy_decay_db(ir: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Schroeder backward-integrated energy decay curve in dB (0 dB at the start)."""
    power = np.square(np.asarray(ir, dtype=np.float64))
    remaining = np.cumsum(power[::-1])[::-1]
    with np.errstate(divide="ignore"):
        return np.asarray(10.0 * np.log10(remaining / remaining[0]), dtype=np.float64)


def direct_to_reverberant_db(
    ir: npt.ArrayLike, rate: int, direct_index: int, *, window_ms: float = DIRECT_WINDOW_MS
) -> float:
    """Energy within ``window_ms`` of the direct sound over the energy of everything else."""
    h = np.square(np.asarray(ir, dtype=np.float64))
    half = round(window_ms / 1000.0 * rate)
    a, b = max(0, direct_index - half), direct_index + half + 1
    direct = float(np.sum(h[a:b]))
    rest = float(np.sum(h)) - direct
    return 10.0 * math.log10(direct / rest) if rest > 0 else math.inf


def _simulate(
    pra: ModuleType,
    setup: RoomSetup,
    rate: int,
    absorption: float,
    order: int,
    talker: npt.NDArray[np.float64],
    mic: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]:
    room = pra.ShoeBox(
        list(setup.dimensions_m), fs=rate, materials=pra.Material(absorption), max_order=order
    )
    room.add_source(talker.tolist())
    room.add_microphone(mic.tolist())
    room.compute_rir()
    return np.asarray(room.rir[0][0], dtype=np.float64)


def design(setup: RoomSetup) -> tuple[float, int]:
    """Sabine absorption and image order for ``setup`` (before calibration); raises when the
    RT60 cannot be reached in that room or would need more than ``MAX_IMAGE_ORDER``. Cheap:
    call it to check a configuration before any simulation."""
    pra = _pyroomacoustics()
    try:
        absorption, order = pra.inverse_sabine(setup.rt60_s, list(setup.dimensions_m))
    except ValueError as exc:
        raise AudioError(
            f"room {setup.room!r}: RT60 {setup.rt60_s} s is too short for a "
            f"{'x'.join(f'{d:g}' for d in setup.dimensions_m)} m room ({exc})"
        ) from exc
    if order > MAX_IMAGE_ORDER:
        raise AudioError(
            f"room {setup.room!r}: RT60 {setup.rt60_s} s needs image order {order} in this room "
            f"(limit {MAX_IMAGE_ORDER}, for run time): choose a shorter RT60 or a larger room"
        )
    return float(absorption), int(order)


@functools.lru_cache(maxsize=64)
def room_response(setup: RoomSetup, rate: int, seed: int) -> RoomResponse:
    """The impulse response of ``setup`` at ``rate`` Hz for the placement drawn from ``seed``.

    Cached: a call applies the same room to every caller utterance."""
    pra = _pyroomacoustics()
    talker, mic = place(setup, seed)
    absorption, order = design(setup)
    raw = _simulate(pra, setup, rate, absorption, order, talker, mic)
    measured = measure_rt60(raw, rate)
    for _ in range(CALIBRATION_STEPS):
        if abs(measured / setup.rt60_s - 1.0) <= RT60_TOLERANCE:
            break
        # RT60 is close to inversely proportional to the absorption (Sabine).
        absorption = min(MAX_ABSORPTION, absorption * measured / setup.rt60_s)
        raw = _simulate(pra, setup, rate, absorption, order, talker, mic)
        measured = measure_rt60(raw, rate)
    delay = math.floor(setup.distance_m / SPEED_OF_SOUND * rate)
    aligned = raw[delay:]
    below = np.flatnonzero(energy_decay_db(aligned) < -DECAY_FLOOR_DB)
    if below.size:
        aligned = aligned[: below[0]]
    ir = aligned / math.sqrt(float(np.sum(np.square(aligned))))
    ir.setflags(write=False)
    direct = FRACTIONAL_DELAY_LEAD + round(setup.distance_m / SPEED_OF_SOUND * rate - delay)
    return RoomResponse(
        setup=setup,
        rate=rate,
        seed=seed,
        talker_m=(float(talker[0]), float(talker[1]), float(talker[2])),
        mic_m=(float(mic[0]), float(mic[1]), float(mic[2])),
        absorption=absorption,
        max_order=order,
        ir=ir,
        measured_rt60_s=measured,
        drr_db=direct_to_reverberant_db(ir, rate, direct),
    )


def reverberate(audio: Audio, response: RoomResponse, *, tail: Tail = "keep") -> Audio:
    """``audio`` as the microphone of ``response`` picks it up (see the module notes for the
    level, alignment and ``tail`` policies). The response must be at the audio's rate."""
    require_samples(audio, "reverberate")
    if response.rate != audio.rate:
        raise AudioError(
            f"{audio.source}: room response is at {response.rate} Hz, audio at {audio.rate} Hz"
        )
    if tail not in ("keep", "cut"):
        raise AudioError(f"{audio.source}: reverberate: tail must be 'keep' or 'cut', not {tail!r}")
    wet = signal.oaconvolve(audio.samples.astype(np.float64), response.ir)
    if tail == "cut":
        wet = wet[: audio.num_samples]
    return audio.with_samples(limit_peak(wet))


def apply_room(
    audio: Audio,
    room: str = "living_room",
    *,
    rt60_s: float | None = None,
    distance_m: float | None = None,
    seed: int = 0,
    tail: Tail = "keep",
) -> Audio:
    """``audio`` spoken in ``room`` and picked up ``distance_m`` away (placement from
    ``seed``): ``reverberate`` with ``room_response``."""
    setup = room_setup(room, rt60_s=rt60_s, distance_m=distance_m)
    return reverberate(audio, room_response(setup, audio.rate, seed), tail=tail)
