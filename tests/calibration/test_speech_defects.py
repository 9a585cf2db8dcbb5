"""The audio development set: agent turns rendered onto a track whose times match the audio,
and a copy whose one turn was rendered from text with an entity one character off while the
intended text keeps the right one. A tone renderer keeps the structural tests fast; one test
with the embedded models shows the offline ASR check hears the planted entity."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from voxeval.audio import Audio
from voxeval.calibration.calibrate import audio_builder
from voxeval.calibration.dev_set import CLEAN, CalibrationExample, build_dev_set
from voxeval.calibration.speech_defects import RATE
from voxeval.scoring.metric_runner import run_metric
from voxeval.scoring.replies.reply_record import ScoringResources

rendered: list[str] = []


def tone_render(text: str) -> Audio:
    """20 ms per character, a pitch that depends on the text: two texts differ in sound."""
    rendered.append(text)
    pitch = 200 + int(hashlib.sha256(text.encode()).hexdigest()[:4], 16) % 400
    t = np.arange(int(0.02 * len(text) * RATE)) / RATE
    return Audio((0.3 * np.sin(2 * np.pi * pitch * t)).astype(np.float32), RATE)


def pair(examples: list[CalibrationExample], scenario: str) -> tuple[CalibrationExample, ...]:
    clean = next(e for e in examples if e.scenario_id == scenario and e.defect == CLEAN)
    defect = next(e for e in examples if e.scenario_id == scenario and e.defect != CLEAN)
    return clean, defect


def test_a_mispronounced_entity_is_in_the_audio_and_not_in_the_intended_text() -> None:
    dev_set = build_dev_set(
        ["agent_speech_fidelity"],
        per_defect=2,
        seed=1,
        audio=audio_builder(tone_render),
        min_items=1,
    )
    assert dev_set.shortfall == {} and len(dev_set.scenarios) == 2
    assert {e.metric for e in dev_set.examples} == {"agent_speech_fidelity"}
    for scenario in dev_set.scenarios:
        clean, defect = pair(dev_set.examples, scenario)
        assert (clean.expected.defect, defect.expected.defect) == (False, True)
        edit = defect.edit
        assert edit["spoken"] != edit["intended"]
        assert defect.record.timeline is not None and clean.record.timeline is not None
        intended = {s.turn: s.intended_text for s in defect.record.timeline.speech("assistant")}
        assert intended == {
            s.turn: s.intended_text for s in clean.record.timeline.speech("assistant")
        }
        assert edit["intended"] in intended[edit["turn"]]
        assert edit["spoken"] in edit["rendered_text"]
        assert edit["rendered_text"] == intended[edit["turn"]].replace(
            edit["intended"], edit["spoken"], 1
        )
        # every agent turn's audio sits on the track where the timeline says
        for example in (clean, defect):
            track = example.record.tracks["assistant"]
            assert example.record.timeline is not None
            for seg in example.record.timeline.speech("assistant"):
                wrong = example is defect and seg.turn == edit["turn"]
                expected = tone_render(edit["rendered_text"] if wrong else seg.intended_text)
                cut = track.slice(seg.start, seg.end)
                assert abs(cut.num_samples - expected.num_samples) <= 1
                n = min(cut.num_samples, expected.num_samples)
                assert np.allclose(cut.samples[:n], expected.samples[:n])
            assert "user" not in example.record.tracks


def test_no_audio_builder_no_audio_examples() -> None:
    dev_set = build_dev_set(
        ["agent_speech_fidelity", "speakability"], per_defect=1, seed=0, min_items=1
    )
    assert {e.metric for e in dev_set.examples} == {"speakability"}


@pytest.mark.models
def test_the_offline_asr_check_hears_the_planted_entity() -> None:
    from voxeval.providers import create_provider

    dev_set = build_dev_set(
        ["agent_speech_fidelity"], per_defect=1, seed=1, audio=audio_builder(), min_items=1
    )
    clean, defect = pair(dev_set.examples, dev_set.scenarios[0])
    resources = ScoringResources(asr=lambda: create_provider("asr", "whisper-tiny-en"))
    clean_score = run_metric("agent_speech_fidelity_asr", clean.record, resources)
    defect_score = run_metric("agent_speech_fidelity_asr", defect.record, resources)
    # Whisper tiny may mishear a name anywhere; the planted entity is what must differ
    turn, entity = defect.edit["turn"], defect.edit["intended"]

    def missed(score: object) -> list[str]:
        rows = score.details["turns"]  # type: ignore[attr-defined]
        return next(r["missed"] for r in rows if r["turn"] == turn)

    assert entity not in missed(clean_score), clean_score.details
    assert entity in missed(defect_score), defect_score.details
