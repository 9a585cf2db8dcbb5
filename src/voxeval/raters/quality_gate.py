"""The listening gate: an answer counts only if the page played every stimulus to its end,
really listening (the time the clip spent playing, measured between the page's ``play`` and
``pause``/``ended`` reports on the server clock, is close to the clip's length: seeking to the
end does not count), and stayed open at least ``min_time_factor`` x the total audio duration
(server clock, from the moment the page was first opened). Playback events come from the
page's script."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.engine import Connection

from voxeval.raters.database import as_utc
from voxeval.raters.schema import playback_table
from voxeval.raters.study.study_files import StudyItem

PLAYBACK_EVENTS = ("play", "pause", "ended")
# An "ended" event must report a media time near the clip's end (browsers round).
_END_TOLERANCE = 0.9
_END_SLACK_S = 0.05
# Listened time, summed over play -> pause/ended intervals, must reach this share of the
# clip's length, less a slack for the two reports' network delays.
LISTEN_SHARE = 0.9
LISTEN_SLACK_S = 0.25


def required_listening(duration_s: float) -> float:
    """Seconds a clip of ``duration_s`` must have been playing to count as heard."""
    return max(0.0, LISTEN_SHARE * duration_s - LISTEN_SLACK_S)


@dataclass(frozen=True)
class GateStatus:
    unplayed: tuple[str, ...]  # stimulus ids without a valid "ended" event
    seconds_left: float  # time the page must still stay open

    @property
    def passed(self) -> bool:
        return not self.unplayed and self.seconds_left <= 0

    def explanation(self, labels: Mapping[str, str] | None = None) -> str:
        """Why an answer cannot be accepted yet (``labels`` names the clips as shown)."""
        parts = []
        if self.unplayed:
            names = [(labels or {}).get(s, s) for s in self.unplayed]
            parts.append(
                "play every clip to the end before answering (not yet finished: "
                + ", ".join(names)
                + ")"
            )
        if self.seconds_left > 0:
            parts.append(
                f"listen for at least {self.seconds_left:.0f} more second(s) before answering"
            )
        if not parts:
            return ""
        text = "; ".join(parts)  # (str.capitalize would lower-case "Reply A")
        return text[0].upper() + text[1:] + "."


def required_seconds(item: StudyItem, min_time_factor: float) -> float:
    return min_time_factor * item.total_audio_s


def gate_status(
    conn: Connection,
    assignment_id: int,
    item: StudyItem,
    page_opened_at: datetime | None,
    min_time_factor: float,
    now: datetime,
) -> GateStatus:
    durations = {s.id: s.duration_s for s in item.stimuli}
    reached_end: set[str] = set()
    listened: dict[str, float] = {}
    playing_since: dict[str, datetime] = {}
    for row in conn.execute(
        select(
            playback_table.c.stimulus_id,
            playback_table.c.event,
            playback_table.c.media_time,
            playback_table.c.at,
        )
        .where(playback_table.c.assignment_id == assignment_id)
        .order_by(playback_table.c.event_id)
    ):
        stimulus, at = row.stimulus_id, as_utc(row.at)
        duration = durations.get(stimulus)
        if duration is None:
            continue
        if row.event == "play":
            # a second "play" without a pause (the page was reloaded mid-clip): the
            # unreported stretch is not counted
            playing_since[stimulus] = at
            continue
        started = playing_since.pop(stimulus, None)  # pause or ended closes an interval
        if started is not None:
            listened[stimulus] = listened.get(stimulus, 0.0) + max(
                0.0, (at - started).total_seconds()
            )
        if (
            row.event == "ended"
            and row.media_time is not None
            and row.media_time >= _END_TOLERANCE * duration - _END_SLACK_S
        ):
            reached_end.add(stimulus)
    ended = {s for s in reached_end if listened.get(s, 0.0) >= required_listening(durations[s])}
    unplayed = tuple(s.id for s in item.stimuli if s.id not in ended)
    needed = required_seconds(item, min_time_factor)
    if page_opened_at is None:
        left = needed
    else:
        left = needed - (now - as_utc(page_opened_at)).total_seconds()
    return GateStatus(unplayed, max(0.0, left) if needed > 0 else 0.0)
