"""Playback through a small loudspeaker, optionally recaptured by a microphone in a room.

The chain, in the order a real playback rig applies it:

1. **Soft clipping** (amplifier and driver running out of excursion):
   ``y = k * tanh(x / k)`` with the knee ``k = knee * peak(x)``. Samples well below the knee
   pass unchanged; the loudest peak of the utterance is compressed to
   ``knee * tanh(1 / knee)`` of its value (-3.4 dB for the phone's knee of 0.8, -1.2 dB for
   the smart speaker's 1.5). The knee
   follows the utterance's own peak, so the distortion does not depend on the input level.
2. **Band limit** of the driver and its enclosure: a Butterworth high pass at ``low_hz`` and
   low pass at ``high_hz`` (each of ``order``, causal like the device). The low pass is left
   out when ``high_hz`` is at or above 95 % of the audio's Nyquist frequency: the sample rate
   already limits the band there. At frequency ``f`` and rate ``fs`` the gain is, with
   ``w(f) = tan(pi f / fs)``: ``-10 log10(1 + (w(low)/w(f))**(2 order))`` dB for the high
   pass and ``-10 log10(1 + (w(f)/w(high))**(2 order))`` dB for the low pass
   (``band_gain_db``).
3. **Level**: the result is scaled back to the input's RMS (the listener turns the volume up
   to the same loudness), then to a peak of at most ``HEADROOM_PEAK``.
4. **Recapture** (optional): ``room_acoustics.reverberate`` with the loudspeaker standing
   where the talker would, so the room and distance options are those of ``reverb``.

Only the room placement is random (drawn from the seed); the device itself is deterministic.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import numpy.typing as npt
from scipy import signal

from voxeval.audio.checks import require_samples
from voxeval.audio.mix import HEADROOM_PEAK, limit_peak
from voxeval.audio.room_acoustics import Tail, reverberate, room_response, room_setup
from voxeval.audio.value import Audio
from voxeval.errors import AudioError
from voxeval.json_types import JSONObject

NYQUIST_SHARE = 0.95  # a low pass this close to Nyquist is left out


@dataclass(frozen=True)
class DevicePreset:
    """A playback device: pass band (Hz), filter order per edge and soft-clipping knee."""

    name: str
    low_hz: float
    high_hz: float
    order: int
    knee: float
    description: str

    def describe(self) -> JSONObject:
        return asdict(self)


DEVICE_PRESETS: dict[str, DevicePreset] = {
    d.name: d
    for d in (
        DevicePreset(
            "phone",
            300.0,
            3400.0,
            4,
            0.8,
            "phone loudspeaker playing a narrowband call: 300-3400 Hz, audible distortion",
        ),
        DevicePreset(
            "laptop",
            200.0,
            7000.0,
            4,
            1.0,
            "laptop speakers: no bass below 200 Hz, top end to 7 kHz, mild distortion",
        ),
        DevicePreset(
            "smart_speaker",
            80.0,
            12000.0,
            2,
            1.5,
            "small smart speaker: bass from 80 Hz, gentle slopes, little distortion",
        ),
    )
}


def device_preset(name: str) -> DevicePreset:
    preset = DEVICE_PRESETS.get(name)
    if preset is None:
        raise AudioError(f"playback: unknown device {name!r}; known: {', '.join(DEVICE_PRESETS)}")
    return preset


def _keeps_low_pass(device: DevicePreset, rate: int) -> bool:
    return device.high_hz < NYQUIST_SHARE * rate / 2


def band_sos(device: DevicePreset, rate: int) -> npt.NDArray[np.float64]:
    """The device's band limit as second-order sections at ``rate``."""
    if device.low_hz >= NYQUIST_SHARE * rate / 2:
        raise AudioError(
            f"playback: device {device.name!r} starts at {device.low_hz} Hz, above what "
            f"{rate} Hz audio holds"
        )
    sections = [signal.butter(device.order, device.low_hz, "highpass", fs=rate, output="sos")]
    if _keeps_low_pass(device, rate):
        sections.append(
            signal.butter(device.order, device.high_hz, "lowpass", fs=rate, output="sos")
        )
    return np.asarray(np.concatenate(sections), dtype=np.float64)


def band_gain_db(device: DevicePreset, rate: int, freq_hz: float) -> float:
    """The closed-form gain of ``band_sos`` at ``freq_hz`` (see the module notes)."""

    def warp(f: float) -> float:
        return math.tan(math.pi * f / rate)

    n2 = 2 * device.order
    gain = -10.0 * math.log10(1.0 + (warp(device.low_hz) / warp(freq_hz)) ** n2)
    if _keeps_low_pass(device, rate):
        gain -= 10.0 * math.log10(1.0 + (warp(freq_hz) / warp(device.high_hz)) ** n2)
    return gain


def device_band(audio: Audio, device: str = "phone") -> Audio:
    """``audio`` through the band limit of ``device`` alone (step 2 of the notes)."""
    require_samples(audio, "device_band")
    sos = band_sos(device_preset(device), audio.rate)
    return audio.with_samples(signal.sosfilt(sos, audio.samples.astype(np.float64)))


def soft_clip(samples: npt.ArrayLike, knee: float) -> npt.NDArray[np.float64]:
    """``k tanh(x / k)`` with ``k = knee * peak(x)`` (identity for silence)."""
    x = np.asarray(samples, dtype=np.float64)
    if not 0.0 < knee <= 10.0:
        raise AudioError(f"soft_clip: knee must be in (0, 10], got {knee}")
    top = float(np.max(np.abs(x))) if x.size else 0.0
    if top == 0.0:
        return x
    k = knee * top
    return np.asarray(k * np.tanh(x / k), dtype=np.float64)


def play_through(audio: Audio, device: str = "phone") -> Audio:
    """``audio`` as the loudspeaker of ``device`` reproduces it (steps 1-3 of the notes)."""
    require_samples(audio, "play_through")
    preset = device_preset(device)
    x = audio.samples.astype(np.float64)
    clipped = soft_clip(x, preset.knee)
    out = signal.sosfilt(band_sos(preset, audio.rate), clipped)
    level_in = math.sqrt(float(np.mean(np.square(x))))
    level_out = math.sqrt(float(np.mean(np.square(out))))
    if level_in > 0.0 and level_out > 0.0:
        out = out * (level_in / level_out)
    return audio.with_samples(limit_peak(out, above=HEADROOM_PEAK))


def playback(
    audio: Audio,
    device: str = "phone",
    *,
    room: str | None = None,
    rt60_s: float | None = None,
    distance_m: float | None = None,
    seed: int = 0,
    tail: Tail = "keep",
) -> Audio:
    """``play_through`` ``device``, then (when ``room`` is given) recaptured in that room
    ``distance_m`` from the loudspeaker, placement drawn from ``seed``."""
    played = play_through(audio, device)
    if room is None:
        if rt60_s is not None or distance_m is not None:
            raise AudioError(f"{audio.source}: playback: rt60_s and distance_m need a room")
        return played
    setup = room_setup(room, rt60_s=rt60_s, distance_m=distance_m)
    return reverberate(played, room_response(setup, audio.rate, seed), tail=tail)
