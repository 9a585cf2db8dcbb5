import pytest

from voxeval.errors import ConfigError
from voxeval.simulation.latency import RenderingLatency
from voxeval.simulation.simulation_config import parse_simulation


def test_declared_rendering_model_golden() -> None:
    assert RenderingLatency().seconds("any length at all") == 0.25  # documented default
    model = RenderingLatency(first_audio_ms=120, per_char_ms=2)
    assert model.seconds("  hello  ") == pytest.approx(0.130)  # 5 characters, trimmed


def test_config_declares_the_rendering_model() -> None:
    sim = parse_simulation({"tts_latency_model": {"first_audio_ms": 400}})
    assert sim.tts_latency_model == RenderingLatency(first_audio_ms=400, per_char_ms=0)
    assert parse_simulation({}).tts_latency_model == RenderingLatency()
    with pytest.raises(ConfigError, match="tts_latency_model"):
        parse_simulation({"tts_latency_model": {"first_audio": 400}})
    with pytest.raises(ConfigError, match="tts_latency_model"):
        parse_simulation({"tts_latency_model": {"first_audio_ms": -1}})
