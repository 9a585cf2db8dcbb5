"""The settings of voxeval's turn handling and the streaming VAD it listens with: the types a
turn-based call agent may bring of its own (``CallAgent.turn_policy``, ``turn_vad()``). They
live apart from ``turn_handling`` so the agent contract in ``systems.call`` can name them."""

from __future__ import annotations

from typing import Protocol

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field


class TurnPolicy(BaseModel):
    """How an adapted agent takes and gives up turns (milliseconds)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    eot_silence_ms: float = Field(default=700.0, gt=0)
    patience_ms: float = Field(default=0.0, ge=0)
    # minimum interruption duration: caller speech over the reply that stops it (None: never)
    barge_in_ms: float | None = Field(default=300.0, ge=0)
    # and the non-backchannel words it must hold (0: duration alone decides)
    min_interruption_words: int = Field(default=0, ge=0)
    min_speech_ms: float = Field(default=100.0, ge=0)


class FrameVAD(Protocol):
    """Streaming voice activity: one decision per frame, in order (it keeps state)."""

    def is_speech(self, frame: npt.NDArray[np.float32]) -> bool: ...

    def silence(self, frames: int, frame_len: int) -> None:
        """``frames`` frames of digital silence went by (the engine skipped an empty line)."""
        ...
