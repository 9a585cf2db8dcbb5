"""Prosody marks change the rendered audio as intended (espeak: fast and deterministic)."""

from __future__ import annotations

import numpy as np
import pytest

from voxeval.audio import Audio, rms
from voxeval.benchmarks.wildspeech.render import (
    STRESS_TEMPO,
    STUTTER_GAP_S,
    STUTTER_ONSET_S,
    pitch_glide,
    plan_chunks,
    render_query,
    stress_word,
    stutter_word,
)
from voxeval.benchmarks.wildspeech.spoken_query import SpokenQuery
from voxeval.providers.factory import availability, create_provider

pytest.importorskip("librosa")


def _espeak():  # type: ignore[no-untyped-def]
    from voxeval.config import ProviderSpec

    if not availability("tts", ProviderSpec(provider="espeak")).available:
        pytest.skip("espeak-ng is not installed")
    return create_provider("tts", "espeak")


def _query(text: str, *marks: dict, sub: str = "pause") -> SpokenQuery:
    return SpokenQuery.model_validate(
        {
            "id": "t",
            "text": text,
            "category": "PF",
            "subcategory": sub,
            "render": {"marks": list(marks)},
        }
    )


def longest_silence(audio: Audio, threshold_db: float = -40.0) -> float:
    """Longest run of 10 ms frames quieter than ``threshold_db`` below the loudest frame."""
    frame = audio.rate // 100
    n = audio.num_samples // frame
    frames = audio.samples[: n * frame].reshape(n, frame).astype(np.float64)
    level = 10 * np.log10(np.mean(frames**2, axis=1) + 1e-12)
    quiet = level < level.max() + threshold_db
    best = run = 0
    for q in quiet:
        run = run + 1 if q else 0
        best = max(best, run)
    return best / 100.0


def median_f0(audio: Audio, fmax: float = 500.0) -> float:
    import librosa

    f0, voiced, _ = librosa.pyin(
        audio.samples.astype(np.float32), fmin=60, fmax=fmax, sr=audio.rate, frame_length=1024
    )
    return float(np.nanmedian(f0[voiced])) if np.any(voiced) else float("nan")


def test_chunks_put_every_mark_on_a_boundary() -> None:
    q = _query(
        "I said I would come on Friday",
        {"kind": "stress", "word": "said"},
        {"kind": "pause", "word": "come", "ms": 400},
        {"kind": "stutter", "word": "Friday"},
    )
    chunks = plan_chunks(q)
    assert [c.text for c in chunks] == ["I", "said", "I would come", "on", "Friday"]
    assert chunks[1].stress is not None
    assert chunks[2].pause_after_ms == 400
    assert chunks[4].stutter is not None


def test_pause_mark_inserts_at_least_the_requested_silence() -> None:
    tts = _espeak()
    plain = render_query(tts, _query("one two three four")).audio
    paused = render_query(
        tts, _query("one two three four", {"kind": "pause", "word": "two", "ms": 800})
    ).audio
    assert longest_silence(plain) < 0.4
    assert longest_silence(paused) >= 0.79
    assert paused.duration > plain.duration + 0.5


def test_stress_is_slower_louder_and_higher(tone: Audio) -> None:
    stressed = stress_word(tone, 3.0, reference_rms=rms(tone))
    assert stressed.duration == pytest.approx(tone.duration / STRESS_TEMPO, rel=0.02)
    assert 20 * np.log10(rms(stressed) / rms(tone)) == pytest.approx(6.0, abs=0.3)
    assert median_f0(stressed, fmax=1000) == pytest.approx(440 * 2 ** (3 / 12), rel=0.03)


def test_stress_mark_lengthens_the_word_in_context() -> None:
    tts = _espeak()
    plain = render_query(tts, _query("I never said that", sub="stress")).audio
    marked = render_query(
        tts, _query("I never said that", {"kind": "stress", "word": "never"}, sub="stress")
    )
    assert marked.marks == [{"kind": "stress", "word": "never"}]
    assert marked.audio.duration > plain.duration + 0.05


def test_stutter_repeats_the_onset(tone: Audio) -> None:
    out = stutter_word(tone, 2)
    expected = tone.duration + 2 * STUTTER_ONSET_S + 2 * STUTTER_GAP_S
    assert out.duration == pytest.approx(expected, abs=0.005)
    onset = round(STUTTER_ONSET_S * tone.rate) - round(0.03 * tone.rate)  # before the fade
    assert np.allclose(out.samples[:onset], tone.samples[:onset])
    second = round((STUTTER_ONSET_S + STUTTER_GAP_S) * tone.rate)
    assert np.allclose(out.samples[second : second + onset], tone.samples[:onset])


def test_stutter_mark_in_context_is_longer() -> None:
    tts = _espeak()
    plain = render_query(tts, _query("can you help me", sub="stutter")).audio
    marked = render_query(
        tts,
        _query("can you help me", {"kind": "stutter", "word": "help", "repeats": 3}, sub="stutter"),
    ).audio
    assert marked.duration > plain.duration + 3 * (STUTTER_ONSET_S + STUTTER_GAP_S) - 0.1


def test_rising_glide_raises_pitch_towards_the_end() -> None:
    rate = 16000
    t = np.arange(rate) / rate
    tone = Audio((0.5 * np.sin(2 * np.pi * 200 * t)).astype(np.float32), rate)
    risen = pitch_glide(tone, 5.0)
    # output time = integral of 1/speed over the input, speed rising linearly in semitones
    expected = float(np.mean(2.0 ** (-np.linspace(0, 5.0, tone.num_samples) / 12)))
    assert risen.duration == pytest.approx(tone.duration * expected, rel=0.01)
    head, tail = risen.slice(0.05, 0.25), risen.slice(risen.duration - 0.15)
    assert median_f0(head) == pytest.approx(200 * 2 ** (0.6 / 12), rel=0.05)
    assert median_f0(tail) > 200 * 2 ** (4.5 / 12)
    fallen = pitch_glide(tone, -5.0)
    assert median_f0(fallen.slice(fallen.duration - 0.15)) < 200 * 2 ** (-4.5 / 12)


def test_rise_mark_raises_final_pitch_of_speech() -> None:
    tts = _espeak()
    text = "you are coming tomorrow"
    plain = render_query(tts, _query(text, sub="tone")).audio
    risen = render_query(
        tts, _query(text, {"kind": "rise", "word": "tomorrow", "semitones": 5}, sub="tone")
    ).audio
    tail = 0.4
    assert median_f0(risen.slice(risen.duration - tail)) > 1.1 * median_f0(
        plain.slice(plain.duration - tail)
    )


def test_near_homophone_is_spoken_as_written() -> None:
    tts = _espeak()
    q = SpokenQuery.model_validate(
        {"id": "h", "text": "Is the desert hot?", "category": "PF", "subcategory": "near-homophone"}
    )
    rendered = render_query(tts, q)
    assert rendered.chunks == ["Is the desert hot?"]
    assert rendered.marks == []
