"""Listening that line noise does not fool (issue 38, point 1): adapted agents hear the caller
through Silero by default; the energy detector stays an option."""

from __future__ import annotations

import numpy as np
import pytest

from tests.systems.test_turn_handling import Recorder
from voxeval.audio.noise_environments import environment_noise
from voxeval.errors import ConfigError
from voxeval.simulation.simulation_config import parse_simulation
from voxeval.systems.call import LineBlock, Reply, StopSpeaking
from voxeval.systems.turn_handling import (
    EnergyFrameVAD,
    FrameVAD,
    SileroFrameVAD,
    TurnPolicy,
    TurnTakingAdapter,
)

FRAME = 320


@pytest.mark.models
def test_adapted_agents_listen_through_silero_by_default() -> None:
    assert isinstance(parse_simulation({}).agent_vad(None), SileroFrameVAD)
    energy = parse_simulation({"turn_vad": "energy"}).agent_vad(None)
    assert isinstance(energy, EnergyFrameVAD)
    tuned = parse_simulation({"turn_vad": {"provider": "energy", "margin_db": 6}})
    assert isinstance(tuned.agent_vad(None), EnergyFrameVAD)
    strict = parse_simulation({"turn_vad": {"provider": "silero", "threshold": 0.7}})
    vad = strict.agent_vad(None)
    assert isinstance(vad, SileroFrameVAD) and vad.threshold == 0.7
    with pytest.raises(ConfigError, match=r"simulation\.turn_vad"):
        parse_simulation({"turn_vad": {"provider": "energy", "loudness": 3}}).agent_vad(None)


def stops_on_street_noise(vad: FrameVAD) -> list[int]:
    """Frames where an agent replying over a line that carries only street noise stops: the
    caller said one word (a 300 Hz tone at -13 dBFS RMS would be caller speech for an energy
    detector; Silero hears no speech in it either), then 10 s of noise 10 dB below it."""
    adapter = TurnTakingAdapter(Recorder(), TurnPolicy(barge_in_ms=300), vad)
    t = np.arange(16000) / 16000
    word = (0.3 * np.sin(2 * np.pi * 300 * t)).astype(np.float32)
    noise = environment_noise("street", 10.0, seed=3).samples.astype(np.float32)
    noise *= 0.3 / np.sqrt(2) / 10 ** (10 / 20) / float(np.sqrt(np.mean(noise**2)))
    opening = np.concatenate([word + noise[:16000], noise[16000:32000]])
    first = adapter.hear(LineBlock(0, 100, FRAME, 16000, opening))
    if isinstance(first, Reply):
        first.produce()
    stops: list[int] = []
    k = 100
    rest = noise[32000:]
    while k < 100 + rest.size // FRAME:
        a = (k - 100) * FRAME
        block = LineBlock(k, 50, FRAME, 16000, rest[a : a + 50 * FRAME], playing=True)
        action = adapter.hear(block)
        if isinstance(action, StopSpeaking):
            stops.append(action.frame)
            k = action.frame + 1
        else:
            k += 50
    return stops


@pytest.mark.models
def test_street_noise_stops_the_energy_detector_but_not_silero() -> None:
    assert stops_on_street_noise(EnergyFrameVAD())  # the old default is fooled
    assert stops_on_street_noise(parse_simulation({}).agent_vad(None)) == []
