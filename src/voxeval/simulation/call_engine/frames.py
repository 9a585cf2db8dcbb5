"""The call's time grid: samples on the bus and the frames the line moves in."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FrameGrid:
    """``rate`` samples a second, moved ``frame`` samples at a time."""

    rate: int
    frame: int

    def s(self, sample: int) -> float:
        return sample / self.rate

    def samples(self, seconds: float) -> int:
        return round(seconds * self.rate)

    def frame_ceil(self, sample: int) -> int:
        return -(-sample // self.frame)

    def aligned(self, sample: int) -> int:
        """The first frame boundary at or after ``sample`` (speech goes out in frames)."""
        return self.frame_ceil(sample) * self.frame
