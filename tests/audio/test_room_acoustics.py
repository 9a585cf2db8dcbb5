"""Simulated rooms: decay time, far-field pickup, level, alignment and seeding."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.audio.helpers import white_noise
from voxeval.audio import Audio, loudness_lufs, resample, rms_db
from voxeval.audio.room_acoustics import (
    FRACTIONAL_DELAY_LEAD,
    ROOM_PRESETS,
    apply_room,
    direct_to_reverberant_db,
    place,
    reverberate,
    room_response,
    room_setup,
)
from voxeval.errors import AudioError

pytest.importorskip("pyroomacoustics")

RATE = 16000


def schroeder_rt60(ir: np.ndarray, rate: int) -> float:
    """T30 by hand (ISO 3382 style, independent of the library's measurement): a straight
    line fitted to the backward-integrated energy decay over 30 dB from the first point below
    -5 dB, extrapolated to 60 dB. (Close to the talker the direct sound alone takes the curve
    below -5 dB, so the fit starts where it lands.)"""
    energy = np.cumsum(np.square(ir)[::-1])[::-1]
    edc = 10 * np.log10(energy / energy[0])
    start = edc[np.flatnonzero(edc < -5)[0]]
    span = np.flatnonzero((edc <= start) & (edc >= start - 30))
    slope, _ = np.polyfit(span / rate, edc[span], 1)
    return -60.0 / slope


@pytest.mark.parametrize(
    ("room", "rt60"),
    [("small_office", None), ("living_room", None), ("car", None), ("small_office", 0.6)],
)
def test_measured_rt60_is_close_to_the_target(room: str, rt60: float | None) -> None:
    setup = room_setup(room, rt60_s=rt60)
    response = room_response(setup, RATE, 3)
    assert response.measured_rt60_s == pytest.approx(setup.rt60_s, rel=0.05)
    assert schroeder_rt60(response.ir, RATE) == pytest.approx(setup.rt60_s, rel=0.1)


def test_rt60_target_orders_the_decay() -> None:
    short = room_response(room_setup("small_office", rt60_s=0.25), RATE, 1)
    long = room_response(room_setup("small_office", rt60_s=0.5), RATE, 1)
    assert schroeder_rt60(long.ir, RATE) > 1.7 * schroeder_rt60(short.ir, RATE)
    # The response is cut where its decay reaches -60 dB: about one RT60 long.
    assert long.ir.size / RATE == pytest.approx(0.5, rel=0.2)
    assert short.ir.size / RATE == pytest.approx(0.25, rel=0.2)


def test_far_field_lowers_the_direct_to_reverberant_ratio() -> None:
    drr = []
    for distance in (0.5, 1.5, 3.0):
        response = room_response(room_setup("living_room", distance_m=distance), RATE, 4)
        direct = FRACTIONAL_DELAY_LEAD + round(
            distance / 343.0 * RATE - math.floor(distance / 343.0 * RATE)
        )
        measured = direct_to_reverberant_db(response.ir, RATE, direct)
        assert measured == pytest.approx(response.drr_db)
        drr.append(measured)
    # direct energy falls as 1 / r**2 while the reverberant energy stays about the same
    assert drr[0] > drr[1] > drr[2]
    assert drr[0] - drr[2] > 6.0
    assert drr[0] > 0.0 > drr[2]  # near the talker the direct sound dominates, far away not


def test_direct_sound_arrives_at_the_filter_lead() -> None:
    response = room_response(room_setup("car"), RATE, 2)
    impulse = np.zeros(800, np.float32)
    impulse[100] = 0.5
    out = reverberate(Audio(impulse, RATE), response)
    assert int(np.argmax(np.abs(out.samples))) in range(100 + FRACTIONAL_DELAY_LEAD - 1, 142 + 1)


def test_level_is_kept_and_tail_policy_sets_the_length() -> None:
    response = room_response(room_setup("living_room"), RATE, 5)
    assert float(np.sum(np.square(response.ir))) == pytest.approx(1.0)
    dry = white_noise(2.0, amp=0.1, seed=1)
    kept = reverberate(dry, response)
    cut = reverberate(dry, response, tail="cut")
    assert kept.num_samples == dry.num_samples + response.ir.size - 1
    assert cut.num_samples == dry.num_samples
    assert np.array_equal(cut.samples, kept.samples[: dry.num_samples])
    # unit-energy response: a white signal keeps its energy (within the noise of one draw)
    energy = lambda a: float(np.sum(np.square(a.samples.astype(np.float64))))  # noqa: E731
    assert 10 * math.log10(energy(kept) / energy(dry)) == pytest.approx(0.0, abs=0.3)
    # over the input's own span the level stays comparable too
    assert rms_db(cut) == pytest.approx(rms_db(dry), abs=1.0)


def test_loud_input_is_kept_below_full_scale() -> None:
    response = room_response(room_setup("hall"), RATE, 1)
    square = np.sign(np.sin(2 * np.pi * 200 * np.arange(RATE) / RATE)).astype(np.float32)
    out = reverberate(Audio(square * 0.99, RATE), response)
    assert float(np.max(np.abs(out.samples))) == pytest.approx(0.99, abs=1e-6)


def test_same_seed_same_bytes_other_seed_other_room_position() -> None:
    dry = white_noise(0.5, seed=3)
    first = apply_room(dry, "small_office", seed=11)
    room_response.cache_clear()  # recomputed from scratch, not served from the cache
    again = apply_room(dry, "small_office", seed=11)
    assert first.samples.tobytes() == again.samples.tobytes()
    setup = room_setup("small_office")
    a, b = room_response(setup, RATE, 11), room_response(setup, RATE, 12)
    assert a.talker_m != b.talker_m and a.mic_m != b.mic_m
    assert not np.array_equal(first.samples, apply_room(dry, "small_office", seed=12).samples)


@pytest.mark.parametrize("room", list(ROOM_PRESETS))
def test_placements_keep_the_distance_and_the_walls(room: str) -> None:
    setup = room_setup(room)
    dims = np.array(setup.dimensions_m)
    for seed in range(20):
        talker, mic = place(setup, seed)
        assert float(np.linalg.norm(mic - talker)) == pytest.approx(setup.distance_m)
        for point in (talker, mic):
            assert np.all(point[:2] >= setup.wall_margin_m - 1e-9)
            assert np.all(point[:2] <= dims[:2] - setup.wall_margin_m + 1e-9)
        assert setup.talker_height_m[0] <= talker[2] <= setup.talker_height_m[1]
        assert setup.mic_height_m[0] <= mic[2] <= setup.mic_height_m[1]


def test_describe_records_the_room_and_the_draw() -> None:
    response = room_response(room_setup("meeting_room", distance_m=2.0), RATE, 9)
    info = response.describe()
    assert info["room"] == "meeting_room" and info["seed"] == 9 and info["distance_m"] == 2.0
    assert info["rt60_s"] == 0.7 and info["dimensions_m"] == [7.0, 5.0, 3.0]
    assert math.dist(info["talker_m"], info["mic_m"]) == pytest.approx(2.0, abs=0.01)


def test_bad_rooms_are_refused_by_name() -> None:
    with pytest.raises(AudioError, match="unknown room 'cave'"):
        room_setup("cave")
    with pytest.raises(AudioError, match="distance_m"):
        room_setup("car", distance_m=3.0)
    with pytest.raises(AudioError, match="rt60_s"):
        room_setup("hall", rt60_s=9.0)
    with pytest.raises(AudioError, match="image order"):
        room_response(room_setup("car", rt60_s=2.0), RATE, 0)
    with pytest.raises(AudioError, match="too short"):
        room_response(room_setup("hall", rt60_s=0.05), RATE, 0)
    with pytest.raises(AudioError, match="22050 Hz"):
        reverberate(white_noise(0.1, rate=22050), room_response(room_setup("car"), RATE, 0))


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.floats(-1.0, 1.0, width=32), min_size=1, max_size=3000),
    st.sampled_from(["keep", "cut"]),
)
def test_any_input_gives_finite_audio_of_the_promised_length(
    values: list[float], tail: str
) -> None:
    response = room_response(room_setup("car"), RATE, 0)
    dry = Audio(np.array(values, np.float32), RATE)
    out = reverberate(dry, response, tail=tail)  # type: ignore[arg-type]
    expected = dry.num_samples + (response.ir.size - 1 if tail == "keep" else 0)
    assert out.num_samples == expected
    assert np.all(np.isfinite(out.samples))
    assert float(np.max(np.abs(out.samples))) <= 1.0


def test_speech_keeps_its_energy_and_loudness_in_every_room() -> None:
    from voxeval.config import ProviderSpec
    from voxeval.providers.factory import availability, create_provider

    if not availability("tts", ProviderSpec(provider="espeak")).available:
        pytest.skip("espeak-ng is not installed")
    tts = create_provider("tts", {"provider": "espeak"})
    speech = resample(tts.synthesize("Please book a table for two at seven tonight."), RATE)
    energy = lambda a: float(np.sum(np.square(a.samples.astype(np.float64))))  # noqa: E731
    for room in ("car", "small_office", "living_room", "hall"):  # meeting_room: slowest
        wet = apply_room(speech, room, seed=1)
        assert 10 * math.log10(energy(wet) / energy(speech)) == pytest.approx(0.0, abs=2.0)
        assert loudness_lufs(wet) == pytest.approx(loudness_lufs(speech), abs=1.5)
