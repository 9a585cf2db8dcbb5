import numpy as np
import pytest

from tests.simulation.parties import tone_voice
from voxeval.audio import Audio
from voxeval.simulation.turn_detection import EnergyVAD, TurnDetector, words_spoken


def test_energy_vad_marks_tone_frames_only() -> None:
    audio = tone_voice("one two")  # 0.2 s pad + 0.8 s tone + 0.2 s pad
    flags = EnergyVAD().speech_frames(audio, 0.02)
    assert flags.size == 60
    assert not flags[:10].any() and flags[10:50].all() and not flags[50:].any()


def test_long_pause_splits_the_turn_and_short_pause_does_not() -> None:
    detector = TurnDetector(0.7)
    utt = detector.from_audio(tone_voice("book a visit ... on friday"))
    assert utt.audio is not None and utt.duration == pytest.approx(1.2 + 1.0 + 0.8, abs=0.021)
    assert [(round(c.start, 2), round(c.end, 2)) for c in utt.chunks] == [(0.0, 1.2), (2.2, 3.0)]
    longer = TurnDetector(1.5).from_audio(tone_voice("book a visit ... on friday"))
    assert len(longer.chunks) == 1


def test_text_timing_uses_speaking_rate_and_pause_markers() -> None:
    detector = TurnDetector(0.7, words_per_s=2.0, pause_s=1.0)
    utt = detector.from_text("one two three four ... five six")
    assert utt.duration == pytest.approx(2.0 + 1.0 + 1.0)
    assert [(c.start, c.end, c.text) for c in utt.chunks] == [
        (0.0, 2.0, "one two three four"),
        (3.0, 4.0, "five six"),
    ]
    slow = detector.from_text("one two", rate_factor=0.5)
    assert slow.duration == pytest.approx(2.0)


def test_silent_audio_has_no_chunks() -> None:
    utt = TurnDetector().from_audio(Audio(np.zeros(16000, np.float32), 16000))
    assert utt.chunks == () and utt.duration == 0.0


def test_words_spoken_cuts_proportionally() -> None:
    assert words_spoken("a b c d", 0.5) == "a b"
    assert words_spoken("a b ... c d", 1.0) == "a b c d"


@pytest.mark.models
def test_silero_frames_split_a_spoken_turn_at_a_long_pause() -> None:
    from voxeval.providers import create_provider
    from voxeval.providers.voices.speech_renderer import SpeechRenderer
    from voxeval.simulation.turn_detection import ProviderVAD

    audio = SpeechRenderer("piper:joe", pause_s=1.5)("I would like to book ... on Friday please")
    detector = TurnDetector(0.7, vad=ProviderVAD(create_provider("vad", "silero")))
    utt = detector.from_audio(audio)
    assert len(utt.chunks) == 2
    gap = utt.chunks[1].start - utt.chunks[0].end
    assert 1.3 < gap < 1.9
