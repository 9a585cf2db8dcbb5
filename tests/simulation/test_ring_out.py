"""Rooms ring out (issue 38, point 4): a reverberant caller utterance keeps its tail on the line
and in user.wav after its speech ends; the speech segment still ends where the speech ends."""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.simulation.parties import ListAgent, ListCaller
from tests.simulation.test_duplex import call
from voxeval.simulation.perturbations import parse_conditions

RING_OUT_FLOOR_DB = -40.0  # relative to the utterance's peak level


def ring_out_s(track: np.ndarray, start: float, end: float, rate: int = 16000) -> float:
    """How long after ``end`` the level of ``track`` (RMS over 50 ms windows, every 10 ms)
    stays within 40 dB of the utterance's peak level (``start``-``end``)."""
    hop, win = rate // 100, rate // 20

    def levels(a: int, b: int) -> np.ndarray:
        starts = range(a, max(a + 1, b - win + 1), hop)
        frames = np.stack([track[i : i + win] for i in starts]).astype(np.float64)
        return 10 * np.log10(np.mean(frames**2, axis=1) + 1e-20)

    peak = levels(round(start * rate), round(end * rate)).max()
    # windows centred on the instants from the speech's end on
    after = levels(round(end * rate) - win // 2, min(track.size, round((end + 3.0) * rate)))
    below = np.nonzero(after < peak + RING_OUT_FLOOR_DB)[0]
    return (below[0] if below.size else after.size) * hop / rate


def reverberant_call(tail: str) -> Any:
    room = {"name": "reverb", "room": "hall", "distance_m": 3, "tail": tail}
    _, hall = parse_conditions([room])
    return call(
        ListCaller("i need help now", ["yes it is me"]),
        ListAgent(["a b c", "d e f"]),
        "audio",
        caller_transform=hall.transform(7),
        seed=7,
    )


def test_hall_reverb_rings_out_after_every_caller_utterance() -> None:
    result = reverberant_call("keep")
    track = result.user_track.samples
    end = result.timeline.end.t
    # every caller utterance but the goodbye, whose hang-up ends the line with it
    caller = [s for s in result.timeline.speech("user") if not s.backchannel and s.end < end]
    assert len(caller) >= 2
    rings = [ring_out_s(track, s.start, s.end) for s in caller]
    assert min(rings) >= 0.2, rings
    # the segment is the speech: the caller's words end where the dry speech ends
    assert all(abs((s.end - s.start) - 0.4 * len(s.intended_text.split())) < 0.05 for s in caller)


def test_a_cut_tail_keeps_the_old_length() -> None:
    result = reverberant_call("cut")
    track = result.user_track.samples
    caller = [s for s in result.timeline.speech("user") if not s.backchannel]
    assert max(ring_out_s(track, s.start, s.end) for s in caller) < 0.05
