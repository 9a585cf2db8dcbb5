"""The timing settings of the call engine's line and of adapted agents' turn handling."""

from __future__ import annotations

from dataclasses import dataclass

from voxeval.errors import ConfigError
from voxeval.systems.turn_handling import TurnPolicy


@dataclass(frozen=True)
class EngineSettings:
    """Timing of the line and the defaults of adapted agents' turn handling (seconds)."""

    eot_silence_s: float = 0.7  # adapted agents: silence that ends the caller's turn
    patience_s: float = 0.0  # adapted agents: extra listening before taking the turn
    barge_in_s: float | None = 0.3  # adapted agents: caller speech that stops their reply
    min_interruption_words: int = 0  # adapted agents: non-backchannel words it must hold too
    # caller's pause after the agent stops before answering; None: drawn from its persona
    caller_gap_s: float | None = 0.6
    caller_yield_s: float | None = 1.0  # caller stops after being talked over this long
    frame_ms: float = 20.0
    words_per_s: float = 2.5  # text-only speaking rate
    pause_s: float = 1.0  # pause inside a caller turn (default behaviour, text markers)

    def __post_init__(self) -> None:
        if not 10.0 <= self.frame_ms <= 100.0:
            raise ConfigError(f"simulation.frame_ms must be within 10-100, got {self.frame_ms}")

    def turn_policy(self) -> TurnPolicy:
        return TurnPolicy(
            eot_silence_ms=self.eot_silence_s * 1000,
            patience_ms=self.patience_s * 1000,
            barge_in_ms=None if self.barge_in_s is None else self.barge_in_s * 1000,
            min_interruption_words=self.min_interruption_words,
        )
