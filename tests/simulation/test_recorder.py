import json
from pathlib import Path

import numpy as np

from tests.simulation.parties import ListAgent, ListCaller, NoTools, tone_voice
from voxeval.audio import read_audio
from voxeval.simulation.engine import run_call
from voxeval.simulation.latency import ComponentLatency, LatencyModel
from voxeval.simulation.recorder import load_call, record_call
from voxeval.simulation.timeline import Timeline


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
