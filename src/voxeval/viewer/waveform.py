"""Server-side figures of a unit's audio: downsampled peaks of a track and, for calls, the
event timeline under it (speech per speaker, overlaps, interruptions, tool calls), drawn as
inline SVG so the page needs no plotting library. The viewer's script moves a playhead over
the figure and seeks the audio on a click."""

from __future__ import annotations

import functools
import math
from html import escape
from pathlib import Path

import numpy as np
import soundfile as sf

from voxeval.simulation.timeline import Timeline
from voxeval.viewer.unit_artifacts import Overlap

WIDTH = 1000.0  # viewBox units; the SVG scales to the page width
BINS = 500
WAVE_H = 60.0
LANE_H = 18.0
AXIS_H = 16.0
BLOCK = 65536  # frames read at a time: a long call never sits in memory whole


def peaks(path: Path, bins: int = BINS) -> tuple[np.ndarray, np.ndarray, float]:
    """(minimum, maximum) sample per bin of the first channel, and the duration in seconds."""
    stat = path.stat()
    return _peaks(str(path), stat.st_mtime_ns, stat.st_size, bins)


@functools.lru_cache(maxsize=64)
def _peaks(path: str, _mtime: int, _size: int, bins: int) -> tuple[np.ndarray, np.ndarray, float]:
    info = sf.info(path)
    frames = int(info.frames)
    duration = frames / float(info.samplerate) if info.samplerate else 0.0
    low = np.zeros(bins, dtype=np.float32)
    high = np.zeros(bins, dtype=np.float32)
    if frames == 0:
        return low, high, duration
    edges = np.linspace(0, frames, bins + 1).astype(np.int64)
    position = 0
    with sf.SoundFile(path) as f:
        for block in f.blocks(blocksize=BLOCK, dtype="float32", always_2d=True):
            samples = block[:, 0]
            start, stop = position, position + len(samples)
            first = max(0, int(np.searchsorted(edges, start, side="right")) - 1)
            last = min(bins - 1, int(np.searchsorted(edges, stop - 1, side="right")) - 1)
            for b in range(first, last + 1):
                lo = max(edges[b], start) - start
                hi = min(edges[b + 1], stop) - start
                if hi > lo:
                    chunk = samples[lo:hi]
                    low[b] = min(low[b], float(chunk.min()))
                    high[b] = max(high[b], float(chunk.max()))
            position = stop
    return low, high, duration


def _x(t: float, duration: float) -> float:
    return 0.0 if duration <= 0 else round(WIDTH * min(max(t, 0.0), duration) / duration, 2)


def _tick_step(duration: float) -> float:
    for step in (0.1, 0.25, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300):
        if duration / step <= 12:
            return float(step)
    return 600.0


def _wave_path(low: np.ndarray, high: np.ndarray, top: float, height: float) -> str:
    mid = top + height / 2
    scale = height / 2
    n = len(low)
    parts = []
    for i in range(n):
        x = round(WIDTH * (i + 0.5) / n, 2)
        y1 = round(mid - float(high[i]) * scale, 2)
        y2 = round(mid - float(low[i]) * scale, 2)
        if y2 - y1 < 0.5:
            y2 = y1 + 0.5  # silence still shows as a hairline
        parts.append(f"M{x} {y1}V{y2}")
    return "".join(parts)


def _axis(duration: float, top: float) -> list[str]:
    out = [f'<line class="axis" x1="0" y1="{top}" x2="{WIDTH}" y2="{top}"/>']
    step = _tick_step(duration)
    t = 0.0
    while t <= duration + 1e-9 and duration > 0:
        x = _x(t, duration)
        anchor = "start" if t == 0 else ("end" if x > WIDTH - 30 else "middle")
        label = f"{t:g} s"
        out.append(f'<line class="tick" x1="{x}" y1="{top}" x2="{x}" y2="{top + 4}"/>')
        out.append(
            f'<text class="tick-label" x="{x}" y="{top + 14}" text-anchor="{anchor}">'
            f"{escape(label)}</text>"
        )
        t += step
    return out


def figure_svg(
    *,
    title: str,
    audio: Path | None,
    timeline: Timeline | None = None,
    overlaps: list[Overlap] | None = None,
    duration_hint: float | None = None,
    track_id: str = "",
) -> str:
    """An ``<svg>`` with the peaks of ``audio`` (when given) and the lanes of ``timeline``
    (when given). ``track_id`` names the ``<audio>`` element the playhead follows."""
    low = high = None
    duration = 0.0
    if audio is not None:
        low, high, duration = peaks(audio)
    if timeline is not None:
        ends = [s.end for s in timeline.segments] + [t.t for t in timeline.tools]
        if timeline.end is not None:
            ends.append(timeline.end.t)
        duration = max([duration, *ends])
    if duration <= 0 and duration_hint:
        duration = duration_hint
    duration = max(duration, 0.001)
    body: list[str] = []
    y = 0.0
    if low is not None and high is not None:
        body.append(f'<rect class="wave-bg" x="0" y="0" width="{WIDTH}" height="{WAVE_H}"/>')
        body.append(f'<path class="wave" d="{_wave_path(low, high, 0.0, WAVE_H)}"/>')
        y = WAVE_H + 4
    lanes_top = y
    if timeline is not None:
        for speaker, label in (("user", "caller"), ("assistant", "agent")):
            for seg in timeline.speech(speaker):  # type: ignore[arg-type]
                x1, x2 = _x(seg.start, duration), _x(seg.end, duration)
                kinds = [f"seg seg-{speaker}"]
                flags = []
                if seg.interrupted:
                    kinds.append("seg-interrupted")
                    flags.append("interrupted")
                if seg.backchannel:
                    kinds.append("seg-backchannel")
                    flags.append("backchannel")
                if seg.nudge:
                    kinds.append("seg-nudge")
                    flags.append("nudge")
                tip = f"{label} turn {seg.turn}, {seg.start:g}–{seg.end:g} s"
                if flags:
                    tip += f" ({', '.join(flags)})"
                if seg.intended_text:
                    tip += f": {seg.intended_text}"
                body.append(
                    f'<rect class="{" ".join(kinds)}" x="{x1}" y="{y + 2}" '
                    f'width="{max(x2 - x1, 1.0)}" height="{LANE_H - 4}" '
                    f'data-start="{seg.start}"><title>{escape(tip)}</title></rect>'
                )
            y += LANE_H
        for overlap in overlaps or []:
            x1, x2 = _x(overlap.start, duration), _x(overlap.end, duration)
            body.append(
                f'<rect class="overlap" x="{x1}" y="{lanes_top}" width="{max(x2 - x1, 1.0)}" '
                f'height="{2 * LANE_H}"><title>both speak {overlap.start:g}–{overlap.end:g} s'
                "</title></rect>"
            )
        for tool in timeline.tools:
            x = _x(tool.t, duration)
            state = "tool" if tool.valid and not tool.error else "tool tool-bad"
            tip = f"tool call {tool.name} at {tool.t:g} s" + (
                f" — {tool.error}" if tool.error else ""
            )
            body.append(
                f'<g class="{state}" data-start="{tool.t}"><line x1="{x}" y1="0" x2="{x}" '
                f'y2="{y + 6}"/><path d="M{x} {y}l5 6l-5 6l-5-6z"/>'
                f"<title>{escape(tip)}</title></g>"
            )
        y += 14
        if timeline.end is not None:
            x = _x(timeline.end.t, duration)
            body.append(
                f'<line class="end" x1="{x}" y1="0" x2="{x}" y2="{y}"><title>'
                f"call ended: {escape(timeline.end.reason)} at {timeline.end.t:g} s"
                "</title></line>"
            )
    axis_top = y + 2
    body.extend(_axis(duration, axis_top))
    height = axis_top + AXIS_H + 2
    body.append(
        f'<line class="playhead" x1="0" y1="0" x2="0" y2="{axis_top}" visibility="hidden"/>'
    )
    attrs = (
        f'class="timeline" viewBox="0 0 {WIDTH} {math.ceil(height)}" role="img" '
        f'data-duration="{round(duration, 4)}" data-track="{escape(track_id)}" '
        f'aria-label="{escape(title)}"'
    )
    return f"<svg {attrs}><title>{escape(title)}</title>{''.join(body)}</svg>"
