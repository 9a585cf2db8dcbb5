"""The default interruption policy with the embedded models (issue 38, point 2): Piper speaks
(dry or in a hall), Silero hears the line, Whisper tiny.en counts the words. The caller's
backchannel over the agent's reply does not stop it; a correction does. Piper cannot say
"Mm-hm." (Whisper tiny hears "in the magen", "the" at p 0.99; Whisper base "and the
make-up"), which would stop the reply: the callers say "Mhm." instead, which renders as
words Whisper is unsure of."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.systems.test_turn_handling import Recorder
from voxeval.providers import create_provider
from voxeval.simulation.bus import to_rate
from voxeval.simulation.perturbations import parse_conditions
from voxeval.simulation.simulation_config import parse_simulation
from voxeval.systems.call import LineBlock, Reply, StopSpeaking
from voxeval.systems.turn_handling import TurnTakingAdapter

pytestmark = pytest.mark.models
FRAME = 320


def stops(caller_says: str, transform: Any, tts: Any) -> list[int]:
    """Frames where an agent with the run's default turn handling stops its reply while the
    caller says ``caller_says`` over it (after a first turn it answered)."""
    sim = parse_simulation({})
    count = sim.word_counter(None)
    adapter = TurnTakingAdapter(
        Recorder(), sim.engine_settings().turn_policy(), sim.agent_vad(None), count
    )
    hello = to_rate(transform(to_rate(tts.synthesize("Hello, I need some help.")))).samples
    first = np.concatenate([hello, np.zeros(16000 * 2, np.float32)])
    frames = first.size // FRAME
    reply = adapter.hear(LineBlock(0, frames, FRAME, 16000, first[: frames * FRAME]))
    assert isinstance(reply, Reply)
    reply.produce()
    said = to_rate(transform(to_rate(tts.synthesize(caller_says)))).samples
    line = np.concatenate([np.zeros(8000, np.float32), said, np.zeros(16000, np.float32)])
    k0, found = frames + 10, []
    k = k0
    while (k - k0 + 25) * FRAME <= line.size:
        a = (k - k0) * FRAME
        action = adapter.hear(
            LineBlock(k, 25, FRAME, 16000, line[a : a + 25 * FRAME], playing=True)
        )
        if isinstance(action, StopSpeaking):
            found.append(action.frame)
            break
        k += 25
    return found


def test_a_backchannel_does_not_stop_the_reply_and_a_correction_does() -> None:
    tts = create_provider("tts", "piper")
    _, hall = parse_conditions([{"name": "reverb", "room": "hall", "distance_m": 3}])
    room = hall.transform(7)
    assert room is not None

    def dry(audio: Any) -> Any:
        return audio

    for backchannel in ("Mhm.", "Uh-huh.", "Okay.", "Right.", "Yeah."):
        assert stops(backchannel, dry, tts) == [], backchannel
    for backchannel in ("Uh-huh.", "Okay.", "Right."):
        assert stops(backchannel, room, tts) == [], f"{backchannel} in a hall"
    assert stops("No, wait, my date of birth is wrong.", dry, tts)
    assert stops("No, wait, my date of birth is wrong.", room, tts)
