"""How each calibrated metric's score reads as a verdict: the call flagged, each dimension
flagged."""

from __future__ import annotations

from voxeval.calibration.metric_labels import METRIC_LABELS
from voxeval.scoring.score import Score


def test_rated_dimensions_are_flagged_below_three() -> None:
    ratings = {
        "fabricated_tool_parameters": 1,
        "misrepresented_tool_results": 2,
        "policy_violations": 3,
        "failure_to_disambiguate": 3,
        "hallucination": 3,
    }
    score = Score(value=0.0, passed=False, details={"dimensions": ratings})
    verdict = METRIC_LABELS["faithfulness"].verdict(score)
    assert verdict.defect is True
    assert verdict.dimensions == {
        "fabricated_tool_parameters": True,
        "misrepresented_tool_results": True,
        "policy_violations": False,
        "failure_to_disambiguate": False,
        "hallucination": False,
    }
    # a minor slip flags the dimension but the call still passes
    passing = Score(value=0.5, passed=True, details={"dimensions": {**ratings, "policy": 2}})
    assert METRIC_LABELS["faithfulness"].verdict(passing).defect is False


def test_conciseness_tags_and_speakability_share() -> None:
    counts = {
        "verbosity_or_filler": 3,
        "excess_information_density": 0,
        "over_enumeration": 1,
        "disproportionate_detail": 0,
    }
    score = Score(value=0.25, passed=False, details={"tag_counts": counts})
    verdict = METRIC_LABELS["conciseness"].verdict(score)
    assert verdict.defect is True
    assert verdict.dimensions["verbosity_or_filler"] is True
    assert verdict.dimensions["excess_information_density"] is False
    # speakability has no pass threshold: any unspeakable turn flags the call
    speak = METRIC_LABELS["speakability"]
    assert speak.verdict(Score(value=0.8)).defect is True
    assert speak.verdict(Score(value=1.0)).defect is False


def test_caller_corruptions_read_from_nested_details() -> None:
    corruption = {
        name: {"detected": name == "premature_ending", "evidence": "..."}
        for name in METRIC_LABELS["user_behavioural_fidelity"].dimensions
    }
    score = Score(value=0.0, passed=False, details={"corruption": corruption})
    verdict = METRIC_LABELS["user_behavioural_fidelity"].verdict(score)
    assert verdict.defect is True and verdict.dimensions["premature_ending"] is True
    assert verdict.dimensions["extra_modifications"] is False
    # a score that does not say per type leaves the dimensions unknown
    silent = METRIC_LABELS["user_behavioural_fidelity"].verdict(Score(value=1.0, passed=True))
    assert silent.defect is False and set(silent.dimensions.values()) == {None}


def test_agent_speech_fidelity_fails_below_its_threshold() -> None:
    spec = METRIC_LABELS["agent_speech_fidelity"]
    assert spec.judge == "audio"
    assert spec.verdict(Score(value=0.8, passed=False)).defect is True
    assert spec.verdict(Score(value=1.0, passed=True)).defect is False
