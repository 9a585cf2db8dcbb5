"""The metrics each protocol leads with, in the order its reference paper reports them: what a
short overview (the table at the end of ``voxeval run``) shows first when it cannot show
every metric. Other metrics follow in their own order."""

from __future__ import annotations

from collections.abc import Iterable

HEADLINE_METRICS: dict[str, tuple[str, ...]] = {
    "single_turn": ("checklist", "assertions", "wer", "mos"),
    "multi_turn": ("rubric", "rubric_turns"),
    "live_call": (
        "task_completion",
        "tool_call_validity",
        "turn_taking",
        "faithfulness",
        "conversation_progression",
        "conciseness",
        "agent_speech_fidelity",
        "response_latency",
        "authentication_success",
        "conversation_finished",
    ),
}


def headline_first(protocol: str | None, metrics: Iterable[str]) -> list[str]:
    """``metrics`` with the protocol's headline metrics first (in headline order), then the
    rest in the order given. An unknown protocol keeps the order given."""
    given = list(dict.fromkeys(metrics))
    headline = [m for m in HEADLINE_METRICS.get(protocol or "", ()) if m in given]
    return [*headline, *(m for m in given if m not in headline)]
