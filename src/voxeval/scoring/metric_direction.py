"""Which way a metric is better, so results of two systems can be compared.

A metric is ``"higher"`` is better (judge scores, MOS, pass rates) or ``"lower"`` is better
(word error rates). Descriptive metrics (reply duration, speaking rate, latency) have no better
direction: comparisons across systems skip them rather than guess. Built-in metrics are listed
in ``BUILTIN_DIRECTIONS``; a plugin metric declares its own with ``@better_when("higher")``
(the attribute is read from the registered metric function).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Literal, TypeVar, cast

from voxeval.registry import lookup

Better = Literal["higher", "lower"]
DIRECTION_ATTRIBUTE: Final = "voxeval_better"
_DIRECTIONS: Final = ("higher", "lower")

BUILTIN_DIRECTIONS: dict[str, Better] = {
    # single-turn (WildSpeech)
    "checklist": "higher",
    "assertions": "higher",
    "mos": "higher",
    "wer": "lower",
    "language": "higher",  # 1 = the reply is in the expected language
    # live calls (EVA-Bench)
    "task_completion": "higher",
    "turn_taking": "higher",
    "authentication_success": "higher",
    "conversation_finished": "higher",
    "tool_call_validity": "higher",
    "key_entity_accuracy": "higher",
    "stt_wer": "lower",
    "fallback_nudge_rate": "lower",
    # pre_tool_speech_rate is descriptive (better depends on how long the tools take)
    "yield_latency": "lower",
    "barge_in_handling_rate": "higher",
    "backchannel_yield_rate": "lower",
    "false_end_of_turn_rate": "lower",
    "talk_over_ratio": "lower",
    "false_yield_rate": "lower",
    # agent_backchannel_rate is descriptive (whether to backchannel depends on the service)
    # backchannel_rate is descriptive (it describes the caller, voxeval's simulator)
}

F = TypeVar("F", bound=Callable[..., object])


def better_when(direction: Better) -> Callable[[F], F]:
    """Decorator for a metric function: which way its value is better."""
    if direction not in _DIRECTIONS:
        raise ValueError(f"a metric is better when 'higher' or 'lower', not {direction!r}")

    def mark(metric: F) -> F:
        setattr(metric, DIRECTION_ATTRIBUTE, direction)
        return metric

    return mark


def metric_direction(name: str) -> Better | None:
    """``"higher"``/``"lower"`` for a registered metric, None for a descriptive one.
    Raises ``UnknownComponent`` for a name that is not a registered metric."""
    declared = getattr(lookup("metric", name), DIRECTION_ATTRIBUTE, None)
    if declared in _DIRECTIONS:
        return cast(Better, declared)
    return BUILTIN_DIRECTIONS.get(name)
