"""Seeded sampled decodes: a fresh CTranslate2 model per decode (so the draws follow the
seed), made cheaply (shared tokenizer and feature extractor), with the same transcripts as a
whole new faster-whisper model, also when two threads sample at once."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from voxeval.audio import Audio
from voxeval.providers import create_provider
from voxeval.providers.asr import asr_whisper
from voxeval.providers.asr.asr_whisper import WhisperTinyEn

pytestmark = pytest.mark.models

SENTENCE = "Well, you can boil an egg for about eight minutes, then cool it in cold water."
SEEDS = (1, 17, 33)


@pytest.fixture(scope="module")
def tiny() -> WhisperTinyEn:
    asr = create_provider("asr", "whisper-tiny-en")
    assert isinstance(asr, WhisperTinyEn)
    return asr


@pytest.fixture(scope="module")
def speech() -> Audio:
    return create_provider("tts", "piper").synthesize(SENTENCE)


def reference_draw(tiny: WhisperTinyEn, audio: Audio, seed: int) -> str:
    """The draw as a whole new faster-whisper model makes it (what the provider did before)."""
    import ctranslate2

    options: dict[str, Any] = {
        "language": "en",
        "beam_size": 1,
        "temperature": [0.9],
        "word_timestamps": False,
        "condition_on_previous_text": False,
        "best_of": 1,
    }
    ctranslate2.set_random_seed(seed)
    model = asr_whisper._new_model(tiny.model_dir)
    segments, _ = model.transcribe(asr_whisper.to_whisper_input(audio), **options)
    return " ".join(s.text.strip() for s in segments if s.text.strip())


@pytest.fixture(scope="module")
def reference(tiny: WhisperTinyEn, speech: Audio) -> dict[int, str]:
    """Each seed's draw by a whole new faster-whisper model."""
    with asr_whisper._sampling_lock:
        return {seed: reference_draw(tiny, speech, seed) for seed in SEEDS}


def test_draws_equal_a_whole_new_model_and_load_no_tokenizer(
    tiny: WhisperTinyEn, speech: Audio, reference: dict[int, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = [reference[seed] for seed in SEEDS]
    assert len(set(expected)) >= 2, expected  # the seeds do change the draw

    import tokenizers

    loads: list[str] = []
    original = tokenizers.Tokenizer.from_file

    def counted(path: str) -> Any:
        loads.append(path)
        return original(path)

    monkeypatch.setattr(tokenizers.Tokenizer, "from_file", counted)
    drawn = [tiny.transcribe(speech, temperature=0.9, seed=seed).text for seed in SEEDS]
    assert drawn == expected
    assert loads == []  # the shared model's tokenizer serves every sampler


def test_concurrent_draws_equal_sequential_ones(
    tiny: WhisperTinyEn, speech: Audio, reference: dict[int, str]
) -> None:
    # one at a time, the provider draws what a whole new model does (the test above)
    sequential = reference
    concurrent: dict[int, str] = {}

    def draw(seed: int) -> None:
        concurrent[seed] = tiny.transcribe(speech, temperature=0.9, seed=seed).text

    threads = [threading.Thread(target=draw, args=(seed,)) for seed in SEEDS[:2]]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert concurrent == {seed: sequential[seed] for seed in SEEDS[:2]}
