import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from tests.simulation.parties import ListAgent, ListCaller, NoTools, tone_voice
from voxeval.audio import Audio, read_audio
from voxeval.audio.mix import HEADROOM_PEAK, mix_tracks
from voxeval.simulation.bus import BUS_RATE, AudioBus
from voxeval.simulation.engine import CallResult, run_call
from voxeval.simulation.latency import ComponentLatency, LatencyModel
from voxeval.simulation.recorder import load_call, record_call
from voxeval.simulation.timeline import EndEvent, SpeakerSegment, Timeline


def test_recording_files_are_complete_and_match_the_audio(tmp_path: Path) -> None:
    result = run_call(
        None,
        ListCaller("i need help ... with a visit", ["yes please"]),
        ListAgent(["a b c d", "e f"]),
        NoTools(),
        mode="audio",
        latency_model=LatencyModel(agent=ComponentLatency(kind="fixed", ms=600)),
        caller_voice=tone_voice,
        agent_voice=tone_voice,
    )
    expected = {"members": {"a": {"x": 1}}}
    record_call(result, tmp_path, expected_db=expected, meta={"condition": "clean"})
    names = {p.name for p in tmp_path.iterdir()}
    assert names == {
        "user.wav",
        "assistant.wav",
        "mixed.wav",
        "events.jsonl",
        "initial_db.json",
        "final_db.json",
        "db_diff.json",
        "call.json",
    }
    call, timeline, final_db = load_call(tmp_path)
    assert call["end_reason"] == result.end_reason and call["condition"] == "clean"
    assert final_db == {"session": {}}
    assert json.loads((tmp_path / "db_diff.json").read_text())  # the members table is missing
    assert timeline.segments == Timeline.read_jsonl(tmp_path / "events.jsonl").segments
    tracks = {n: read_audio(tmp_path / f"{n}.wav") for n in ("user", "assistant", "mixed")}
    assert len({t.num_samples for t in tracks.values()}) == 1
    for speaker in ("user", "assistant"):
        samples = np.abs(tracks[speaker].samples)
        rate = tracks[speaker].rate
        active = np.zeros(samples.size, bool)
        for seg in timeline.speech(speaker):
            a, b = round(seg.start * rate), round(seg.end * rate)
            inner = samples[a + 160 : b - 160]
            assert inner.size and np.mean(inner > 0.01) > 0.9  # speech inside each segment
            active[a:b] = True
        assert samples[~active].max() < 1e-3  # silence everywhere else
    mixed = tracks["mixed"].samples
    total = tracks["user"].samples + tracks["assistant"].samples
    assert np.abs(mixed - np.clip(total, -1, 1)).max() < 1e-3


def test_text_mode_writes_no_audio(tmp_path: Path) -> None:
    result = run_call(None, ListCaller("hi", []), ListAgent(["ok"]), NoTools(), mode="text")
    record_call(result, tmp_path)
    assert not list(tmp_path.glob("*.wav"))
    assert (tmp_path / "events.jsonl").exists() and not (tmp_path / "db_diff.json").exists()


def loud_voice(text: str) -> Audio:
    """The tone voice at peak 0.9: two parties talking at once sum to 1.8."""
    tone = tone_voice(text)
    return tone.with_samples(tone.samples * 3.0)


def hang_up_mid_caller_turn(voice=tone_voice) -> CallResult:  # type: ignore[no-untyped-def]
    """The caller pauses twice inside its turn; the agent answers the first part with a
    goodbye and hangs up while the caller is speaking its second part (timeline: the caller's
    second part runs 4.2-6.2 s, the agent says goodbye at 4.5 s, yields at 4.8 s and hangs up;
    the caller's third part would start at 7.2 s)."""
    return run_call(
        None,
        ListCaller("i need help ... with a visit next week ... and one more thing", []),
        ListAgent([]),
        NoTools(),
        mode="audio",
        latency_model=LatencyModel(agent=ComponentLatency(kind="fixed", ms=600)),
        caller_voice=voice,
        agent_voice=voice,
    )


def test_a_hang_up_ends_every_track_and_the_timeline(tmp_path: Path) -> None:
    result = hang_up_mid_caller_turn()
    assert result.end_reason == "agent_end_call"
    assert result.duration_s == pytest.approx(4.8)
    record_call(result, tmp_path)
    _, timeline, _ = load_call(tmp_path)
    assert timeline.end is not None and timeline.end.t == pytest.approx(4.8)
    end = timeline.end.t
    for name in ("user", "assistant", "mixed"):
        track = read_audio(tmp_path / f"{name}.wav")
        assert track.num_samples == round(end * track.rate), name  # not one sample past the end
    for audio in (result.user_track, result.assistant_track, result.mixed):  # in memory too
        assert audio is not None and audio.num_samples == round(end * audio.rate)
    user_track = read_audio(tmp_path / "user.wav")
    rate = user_track.rate
    # the caller was cut off mid-word: its audio runs right up to the end
    assert np.abs(user_track.samples[round((end - 0.1) * rate) :]).max() > 0.1
    assert all(s.end <= end for s in timeline.segments)
    caller = timeline.speech("user")
    assert [(s.start, s.end) for s in caller] == [(2.0, 3.2), (4.2, 4.8)]  # 7.2 s never said
    assert result.timeline.speech("user") == caller


def test_the_recorder_cuts_a_result_that_runs_past_its_end(tmp_path: Path) -> None:
    rate = 16000
    tone = np.full(3 * rate, 0.5, np.float32)
    timeline = Timeline(
        segments=[
            SpeakerSegment("assistant", 0.0, 1.0, 0, "hello"),
            SpeakerSegment("user", 1.5, 2.8, 0, "i was saying"),
            SpeakerSegment("user", 2.5, 3.0, 1, "never heard"),
        ],
        end=EndEvent(2.0, "agent_end_call"),
    )
    result = CallResult(
        timeline=timeline,
        user_track=Audio(tone, rate),
        assistant_track=Audio(tone, rate),
        mixed=Audio(tone, rate),
        initial_db={},
        final_db={},
        session={},
        end_reason="agent_end_call",
        duration_s=2.0,
    )
    record_call(result, tmp_path)
    _, recorded, _ = load_call(tmp_path)
    assert [(s.start, s.end, s.intended_text) for s in recorded.segments] == [
        (0.0, 1.0, "hello"),
        (1.5, 2.0, "i was saying"),
    ]
    for name in ("user", "assistant", "mixed"):
        assert read_audio(tmp_path / f"{name}.wav").num_samples == 2 * rate


def test_mixed_track_does_not_clip_where_both_talk(tmp_path: Path) -> None:
    result = hang_up_mid_caller_turn(loud_voice)
    assert result.user_track is not None and result.assistant_track is not None
    total = result.user_track.samples + result.assistant_track.samples
    assert np.abs(total).max() == pytest.approx(1.8, abs=1e-3)  # they do overlap
    record_call(result, tmp_path)
    tracks = {n: read_audio(tmp_path / f"{n}.wav").samples for n in ("user", "assistant", "mixed")}
    # each party's own track keeps its level ...
    assert np.abs(tracks["user"]).max() == pytest.approx(0.9, abs=1e-3)
    assert np.abs(tracks["assistant"]).max() == pytest.approx(0.9, abs=1e-3)
    # ... and the mix is their sum scaled as a whole to the headroom peak, not clipped
    expected = (tracks["user"] + tracks["assistant"]) * (HEADROOM_PEAK / 1.8)
    assert np.abs(tracks["mixed"] - expected).max() < 2e-3
    assert result.mixed is not None and np.abs(result.mixed.samples).max() <= 1.0


def test_a_mix_within_full_scale_is_the_plain_sum() -> None:
    a = Audio(np.array([0.25, -0.5, 0.1], np.float32), 16000)
    b = Audio(np.array([0.5, 0.25], np.float32), 16000)
    mixed = mix_tracks([a, b])
    assert mixed.samples.tolist() == pytest.approx([0.75, -0.25, 0.1])
    assert mixed.num_samples == 3


track_samples = arrays(
    np.float32,
    st.integers(1, 400),
    elements=st.floats(-1.0, 1.0, width=32),
)


@settings(max_examples=200, deadline=None)
@given(tracks=st.lists(track_samples, min_size=1, max_size=4))
def test_mix_never_exceeds_full_scale(tracks: list[np.ndarray]) -> None:
    parts = [Audio(t, 16000) for t in tracks]
    before = [p.samples.copy() for p in parts]
    mixed = mix_tracks(parts)
    assert np.abs(mixed.samples).max() <= 1.0
    assert mixed.num_samples == max(t.size for t in tracks)
    for part, samples in zip(parts, before, strict=True):  # the parties' tracks are untouched
        assert np.array_equal(part.samples, samples)
    # summed in float32 like mix_tracks, so a sum within a rounding step of full scale is
    # judged the same way on both sides
    total = np.zeros(mixed.num_samples, dtype=np.float32)
    for t in tracks:
        total[: t.size] += t.astype(np.float32)
    if np.abs(total).max() <= 1.0:  # no headroom needed: the exact sum
        assert np.allclose(mixed.samples, total, atol=1e-6)
    else:  # scaled as a whole: the shape of the sum is kept
        assert np.abs(mixed.samples).max() == pytest.approx(HEADROOM_PEAK, abs=1e-6)
        assert np.allclose(mixed.samples, total * HEADROOM_PEAK / np.abs(total).max(), atol=1e-6)


@settings(max_examples=100, deadline=None)
@given(
    user=track_samples,
    assistant=track_samples,
    user_at=st.integers(0, 300),
    assistant_at=st.integers(0, 300),
)
def test_bus_mix_never_exceeds_full_scale(
    user: np.ndarray, assistant: np.ndarray, user_at: int, assistant_at: int
) -> None:
    bus = AudioBus()
    bus.write("user", Audio(user, BUS_RATE), user_at / BUS_RATE)
    bus.write("assistant", Audio(assistant, BUS_RATE), assistant_at / BUS_RATE)
    assert np.abs(bus.mixed().samples).max() <= 1.0
    assert np.array_equal(bus.track("user").samples[user_at : user_at + user.size], user)
