"""Rendered mtalk-mini turns carry their tags as sound, where the manifest says.

Each event is measured on the mixed turn inside its annotated span (phone ring: the 400 and
450 Hz tone pair; alarm: 3 kHz band; keyboard: click transients; thunder: sub-80 Hz rumble;
babble and rain: the noise floor between words; speaker B: another F0) and compared with the
same span of the turn rendered without ambient sounds (identical timeline). Delivery cues are
compared with the neutral rendering: pace by duration, pitch by F0, whisper by level.
Voices are espeak's (fast and deterministic); speech never depends on a generative model.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import pytest
from scipy.signal import butter, sosfilt

from voxeval.benchmarks.build_manifest import stable_seed
from voxeval.benchmarks.mtalk.dialogue_suite import load_dialogue_suite
from voxeval.benchmarks.mtalk.mtalk_build import DialogueBuilder
from voxeval.benchmarks.mtalk.mtalk_render import EVENT_LEAD_S, LEAD_IN_S, RATE, RenderedTurn
from voxeval.config import ProviderSpec
from voxeval.providers.factory import availability

pytestmark = pytest.mark.skipif(
    not availability("tts", ProviderSpec(provider="espeak")).available,
    reason="espeak-ng is not installed",
)


@cache
def _builder() -> DialogueBuilder:
    return DialogueBuilder(seed=0, engines=("espeak",))


@cache
def _turn(dialogue_id: str, number: int, cues: bool = True, ambient: bool = True) -> RenderedTurn:
    dialogue = load_dialogue_suite("mtalk-mini").by_id()[dialogue_id]
    renderer = _builder().renderer(dialogue_id, cues=cues, ambient=ambient)
    seed = stable_seed(0, dialogue_id, number)
    return renderer.render(dialogue.turns[number - 1].transcript, seed, dialogue_id)


def _span(turn: RenderedTurn, start_s: float, end_s: float) -> np.ndarray:
    return turn.audio.samples[round(start_s * RATE) : round(end_s * RATE)].astype(np.float64)


def _event(turn: RenderedTurn, kind: str, tag: str | None = None) -> dict[str, Any]:
    return next(e for e in turn.events if e["kind"] == kind and (tag is None or e["tag"] == tag))


def _power(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    spectrum = np.abs(np.fft.rfft(x * np.hanning(x.size))) ** 2 / x.size
    return np.fft.rfftfreq(x.size, 1 / RATE), spectrum


def _band_db_per_s(x: np.ndarray, low: float, high: float) -> float:
    freqs, power = _power(x)
    return float(10 * np.log10(power[(freqs >= low) & (freqs < high)].sum() / x.size + 1e-20))


def _band_share_db(x: np.ndarray, low: float, high: float) -> float:
    freqs, power = _power(x)
    return float(10 * np.log10(power[(freqs >= low) & (freqs < high)].sum() / power.sum()))


def _level_db(x: np.ndarray) -> float:
    return float(10 * np.log10(np.mean(x**2) + 1e-20))


def _dual_tone_share(x: np.ndarray, tones: tuple[float, float] = (400.0, 450.0)) -> float:
    """Share of 0.2 s frames in which both ring tones stand 15 dB over the 300-600 Hz band."""
    frame = round(0.2 * RATE)
    hits = 0
    count = max(1, x.size // frame)
    for i in range(count):
        freqs, power = _power(x[i * frame : (i + 1) * frame])
        band = power[(freqs >= 300) & (freqs < 600)]
        floor = float(np.median(band)) + 1e-20
        peaks = [power[np.abs(freqs - f) < 6].max() for f in tones]
        hits += all(10 * np.log10(p / floor + 1e-20) > 15 for p in peaks)
    return hits / count


def _clicks_per_s(x: np.ndarray) -> float:
    """Transients: a 4 ms frame of the >2 kHz band 9 dB over the previous one that has fallen
    9 dB again within 12 ms (clicks are short; speech onsets last)."""
    high = sosfilt(butter(4, 2000, "highpass", fs=RATE, output="sos"), x)
    frame = round(0.004 * RATE)
    n = high.size // frame
    energy = 10 * np.log10(np.mean(high[: n * frame].reshape(n, frame) ** 2, axis=1) + 1e-12)
    clicks = sum(
        1
        for i in range(1, n - 3)
        if energy[i] - energy[i - 1] > 9
        and energy[i] - min(energy[i + 2], energy[i + 3]) > 9
        and energy[i] > -70
    )
    return clicks / (x.size / RATE)


def _high_band_frames(x: np.ndarray) -> np.ndarray:
    """Level (dB) of the >6 kHz band in 10 ms frames."""
    high = sosfilt(butter(4, 6000, "highpass", fs=RATE, output="sos"), x)
    frame = round(0.01 * RATE)
    n = high.size // frame
    return 10 * np.log10(np.mean(high[: n * frame].reshape(n, frame) ** 2, axis=1) + 1e-12)


def _f0(x: np.ndarray) -> float:
    import librosa

    f0, voiced, _ = librosa.pyin(x.astype(np.float32), fmin=60, fmax=500, sr=RATE)
    return float(np.nanmedian(f0[voiced]))


def _outside_unchanged(with_event: RenderedTurn, without: RenderedTurn, event: dict) -> None:
    """Outside the annotated span the turn is the same with or without the event."""
    a, b = with_event.audio.samples, without.audio.samples
    start, end = round(event["start_s"] * RATE), round(event["end_s"] * RATE)
    assert a.size == b.size
    assert np.array_equal(a[:start], b[:start]) and np.array_equal(a[end:], b[end:])


def test_phone_ring_tones_sound_inside_its_span() -> None:
    turn, quiet = _turn("amb-work-2", 2), _turn("amb-work-2", 2, ambient=False)
    ring = _event(turn, "ambient", "[phone ringing]")
    speech = _event(turn, "speech")
    assert ring["start_s"] == LEAD_IN_S and speech["start_s"] == LEAD_IN_S + EVENT_LEAD_S
    # alone before the words start: the tone pair in most frames
    assert _dual_tone_share(_span(turn, ring["start_s"], speech["start_s"])) >= 0.5
    inside = _dual_tone_share(_span(turn, ring["start_s"], ring["end_s"]))
    baseline = _dual_tone_share(_span(quiet, ring["start_s"], ring["end_s"]))
    assert inside >= 0.4 and baseline <= 0.1
    _outside_unchanged(turn, quiet, ring)


def test_alarm_beeps_raise_the_3khz_band_inside_its_span() -> None:
    turn, quiet = _turn("amb-family-2", 2), _turn("amb-family-2", 2, ambient=False)
    alarm = _event(turn, "ambient", "[alarm]")
    assert alarm["end_s"] - alarm["start_s"] == pytest.approx(2.12, abs=0.01)
    inside = _band_db_per_s(_span(turn, alarm["start_s"], alarm["end_s"]), 2900, 3100)
    baseline = _band_db_per_s(_span(quiet, alarm["start_s"], alarm["end_s"]), 2900, 3100)
    after = _band_db_per_s(_span(turn, alarm["end_s"], turn.audio.duration), 2900, 3100)
    assert inside - baseline > 15 and inside - after > 15


def test_keyboard_clicks_are_transients_inside_its_span() -> None:
    turn, quiet = _turn("amb-work-1", 1), _turn("amb-work-1", 1, ambient=False)
    keys = _event(turn, "ambient", "[keyboard typing]")
    lead = _span(turn, keys["start_s"], keys["start_s"] + EVENT_LEAD_S)
    assert _clicks_per_s(lead) >= 5  # typing on its own
    assert _clicks_per_s(_span(turn, 0, keys["start_s"])) == 0
    # under the words the clicks still stand out above 6 kHz, frame by frame
    span = (keys["start_s"] + EVENT_LEAD_S, keys["end_s"])
    lifted = _high_band_frames(_span(turn, *span)) - _high_band_frames(_span(quiet, *span))
    assert np.sum(lifted > 6) / (span[1] - span[0]) >= 4  # several clicks a second
    _outside_unchanged(turn, quiet, keys)


def test_thunder_rumble_fills_the_low_band_inside_its_span() -> None:
    turn, quiet = _turn("amb-ent-1", 2), _turn("amb-ent-1", 2, ambient=False)
    thunder = _event(turn, "ambient", "[thunder]")
    inside = _band_share_db(_span(turn, thunder["start_s"], thunder["end_s"]), 20, 80)
    baseline = _band_share_db(_span(quiet, thunder["start_s"], thunder["end_s"]), 20, 80)
    assert inside > -12 and inside - baseline > 20


@pytest.mark.parametrize(
    ("dialogue_id", "tag", "level"),
    [("amb-edu-1", "[babble]", -32.0), ("amb-casual-1", "[rain]", -34.0)],
)
def test_backgrounds_run_under_the_words_to_the_end(
    dialogue_id: str, tag: str, level: float
) -> None:
    turn, quiet = _turn(dialogue_id, 1), _turn(dialogue_id, 1, ambient=False)
    background = _event(turn, "ambient", tag)
    speech = _event(turn, "speech")
    assert background["background"] is True
    assert background["end_s"] == pytest.approx(turn.audio.duration, abs=1e-3)
    assert _level_db(_span(turn, 0, background["start_s"])) < -150  # nothing before the tag
    lead = _span(turn, background["start_s"] + 0.1, speech["start_s"])
    assert _level_db(lead) == pytest.approx(level, abs=3.0)
    # still there after the words, up to the end of the turn (less the fade-out)
    tail = (speech["end_s"] + 0.05, turn.audio.duration - 0.06)
    assert _level_db(_span(turn, *tail)) == pytest.approx(level, abs=3.0)
    assert _level_db(_span(quiet, *tail)) < -150


def test_babble_is_speech_of_several_other_voices() -> None:
    turn = _turn("amb-edu-1", 1)
    babble = _event(turn, "ambient", "[babble]")
    lead = _span(turn, babble["start_s"] + 0.1, babble["start_s"] + EVENT_LEAD_S)
    assert _band_share_db(lead, 100, 4000) > -1.0  # the speech band, unlike rain's hiss
    rain = _span(_turn("amb-casual-1", 1), 0.4, 1.0)
    assert _band_share_db(rain, 4000, 12000) > _band_share_db(lead, 4000, 12000) + 6


def test_speaker_b_interjects_with_another_voice() -> None:
    turn = _turn("amb-family-1", 2)
    b_words = _event(turn, "speech", "<Speaker B interjects>")
    a_words = next(e for e in turn.events if e["kind"] == "speech" and e["speaker"] == "A")
    assert b_words["speaker"] == "B" and b_words["voice"] != a_words["voice"]
    assert b_words["end_s"] < a_words["start_s"]
    b_f0 = _f0(_span(turn, b_words["start_s"], b_words["end_s"]))
    a_f0 = _f0(_span(turn, a_words["start_s"], a_words["end_s"]))
    assert abs(12 * np.log2(b_f0 / a_f0)) > 3  # another person: several semitones apart


def _speech_pair(dialogue_id: str, number: int) -> tuple[np.ndarray, np.ndarray, dict]:
    cued, neutral = _turn(dialogue_id, number), _turn(dialogue_id, number, cues=False)
    a, b = _event(cued, "speech"), _event(neutral, "speech")
    return _span(cued, a["start_s"], a["end_s"]), _span(neutral, b["start_s"], b["end_s"]), a


def test_slow_pace_lengthens_the_words() -> None:
    cued, neutral, entry = _speech_pair("para-family-1", 2)
    assert entry["cues"] == ["slow pace"] and entry["delivery"]["tempo"] == 0.75
    assert cued.size / neutral.size == pytest.approx(1 / 0.75, rel=0.08)


def test_high_pitch_raises_f0() -> None:
    cued, neutral, entry = _speech_pair("para-service-1", 1)
    assert entry["delivery"]["pitch_semitones"] == 4.0
    assert cued.size / neutral.size == pytest.approx(1.0, abs=0.05)  # pitch only
    assert 12 * np.log2(_f0(cued) / _f0(neutral)) == pytest.approx(4.0, abs=1.0)


def test_whispering_is_quieter_and_labelled_an_approximation() -> None:
    cued, neutral, entry = _speech_pair("para-work-2", 1)
    assert _level_db(cued) - _level_db(neutral) == pytest.approx(-12.0, abs=0.5)
    assert "whisper rendered as quiet voiced speech" in entry["approximations"]


def test_sigh_is_placed_where_written_and_instructions_are_not_spoken() -> None:
    turn = _turn("para-family-1", 1)
    sigh = _event(turn, "vocal", "[sigh]")
    words = _event(turn, "speech")
    assert sigh["start_s"] == LEAD_IN_S and sigh["end_s"] < words["start_s"]
    breath = _span(turn, sigh["start_s"], sigh["end_s"])
    assert _level_db(breath) == pytest.approx(-28.0, abs=1.0)
    assert _band_share_db(breath, 300, 2700) > -1.0
    assert "approximation" in sigh
    instructed = _turn("para-psych-2", 2)
    instruction = _event(instructed, "instruction")
    assert instruction["rendered"] is False and instruction["start_s"] == instruction["end_s"]
    assert [e["kind"] for e in instructed.events].count("speech") == 1


def test_same_seed_same_samples() -> None:
    first = _turn("amb-psych-1", 1)
    again = DialogueBuilder(seed=0, engines=("espeak",)).renderer("amb-psych-1")
    dialogue = load_dialogue_suite("mtalk-mini").by_id()["amb-psych-1"]
    second = again.render(dialogue.turns[0].transcript, stable_seed(0, "amb-psych-1", 1))
    assert np.array_equal(first.audio.samples, second.audio.samples)
    assert first.events == second.events
    other_seed = again.render(dialogue.turns[0].transcript, stable_seed(1, "amb-psych-1", 1))
    assert not np.array_equal(first.audio.samples, other_seed.audio.samples)
