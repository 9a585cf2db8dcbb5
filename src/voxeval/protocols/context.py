"""Moved to ``voxeval.api.context`` (the contract package); kept so existing imports work."""

from voxeval.api.context import (
    NO_AUDIO_JUDGE_REASON,
    NO_JUDGE_REASON,
    REQUEST_COUNTERS,
    RunContext,
    canonical_spec,
    judge_refusal,
    spec_key,
)

__all__ = [
    "NO_AUDIO_JUDGE_REASON",
    "NO_JUDGE_REASON",
    "REQUEST_COUNTERS",
    "RunContext",
    "canonical_spec",
    "judge_refusal",
    "spec_key",
]
