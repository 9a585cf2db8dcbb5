"""Waveform peaks (golden values) and the timeline figure's parts."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from voxeval.audio import Audio, write_audio
from voxeval.simulation.timeline import EndEvent, SpeakerSegment, Timeline, ToolEvent
from voxeval.viewer.unit_artifacts import Overlap, speech_overlaps
from voxeval.viewer.waveform import figure_svg, peaks


def test_peaks_are_the_min_and_max_of_each_bin(tmp_path: Path) -> None:
    # 4 bins of 1000 samples: silence, +0.5 constant, a ramp -0.25..0.75, -0.5 constant
    samples = np.concatenate(
        [np.zeros(1000), np.full(1000, 0.5), np.linspace(-0.25, 0.75, 1000), np.full(1000, -0.5)]
    ).astype(np.float32)
    write_audio(Audio(samples, 8000), tmp_path / "a.wav")
    low, high, duration = peaks(tmp_path / "a.wav", bins=4)
    assert duration == 0.5
    np.testing.assert_allclose(low, [0.0, 0.0, -0.25, -0.5], atol=1e-3)
    np.testing.assert_allclose(high, [0.0, 0.5, 0.75, 0.0], atol=1e-3)


def test_peaks_of_a_long_file_span_read_blocks(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    samples = (rng.uniform(-0.9, 0.9, 200_000)).astype(np.float32)
    samples[150_001] = 0.99  # a spike inside the fourth block of 65,536 frames
    write_audio(Audio(samples, 16000), tmp_path / "long.wav")
    low, high, _ = peaks(tmp_path / "long.wav", bins=100)
    spike_bin = 150_001 * 100 // 200_000
    assert abs(high[spike_bin] - 0.99) < 1e-3  # 16-bit PCM rounding
    assert int(np.argmax(high)) == spike_bin
    assert all(-0.91 < v < 0 for v in low)


def test_overlaps_are_where_both_speak() -> None:
    segments = [
        SpeakerSegment("assistant", 0.0, 2.0, 0),
        SpeakerSegment("user", 1.5, 3.0, 0, interrupted=False),
        SpeakerSegment("assistant", 3.5, 4.0, 1),
        SpeakerSegment("user", 5.0, 6.0, 1),
    ]
    assert speech_overlaps(segments) == [Overlap(1.5, 2.0)]


def test_timeline_figure_draws_lanes_overlaps_tools_and_end() -> None:
    timeline = Timeline(
        [
            SpeakerSegment("assistant", 0.0, 2.0, 0, "Hello <there>", interrupted=True),
            SpeakerSegment("user", 1.5, 3.0, 0, "Hi"),
        ],
        [ToolEvent(2.5, 1, "book", {"day": "fri"}, {"ok": True}, valid=False, error="bad day")],
        EndEvent(4.0, "user_end_call"),
    )
    svg = figure_svg(title="t", audio=None, timeline=timeline, overlaps=[Overlap(1.5, 2.0)])
    assert 'data-duration="4.0"' in svg
    assert re.findall(r'class="seg seg-(\w+)', svg) == ["user", "assistant"]
    assert "seg-interrupted" in svg and "Hello &lt;there&gt;" in svg  # text is escaped
    # x positions on the 1000-unit axis: the overlap 1.5-2.0 s of 4 s
    assert '<rect class="overlap" x="375.0" y="0.0" width="125.0"' in svg
    assert '<g class="tool tool-bad" data-start="2.5"><line x1="625.0"' in svg
    assert '<line class="end" x1="1000.0"' in svg
