"""A dataset in exactly the released WildSpeech-Bench layout (parquet, embedded audio bytes,
noisy and clean rows, prosodical rows with their subtype in ``additional_info``, one bad
row) loads unedited and runs end to end: one unit per row, reported under its own condition,
the released recording never mixed with more noise."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import soundfile as sf
import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from tests.support.query_clips import QUERY_SECONDS
from voxeval.audio import Audio, read_audio, write_audio
from voxeval.benchmarks.build import build_suite
from voxeval.benchmarks.wildspeech.wildspeech_loader import (
    import_wildspeech,
    write_wildspeech_suite,
)
from voxeval.cli.main import app

RATE = 16000
# (conversation_hash, taskType, modification_type, additional_info, tone Hz)
RELEASE = [
    ("a1f3", "Information Inquiry", "", None, 220.0),
    ("b2e4", "Solution Request", "natural_noise", None, 260.0),
    ("c3d5", "Opinion Exchange", "human_noise", None, 300.0),
    ("d4c6", "prosodical", "", "The speaker is stuttering on 'b-b-book'", 340.0),
    ("e5b7", "prosodical", "natural_noise", "a long pause after 'woman'", 380.0),
    ("f6a8", "Text Creation", "", None, 420.0),  # its audio bytes are damaged
]


def _recording(hz: float, noisy: bool) -> np.ndarray:
    t = np.arange(int(QUERY_SECONDS * RATE)) / RATE
    speech = 0.3 * np.sin(2 * np.pi * hz * t)
    if noisy:  # the release ships noisy recordings already mixed
        speech = speech + 0.05 * np.random.default_rng(int(hz)).standard_normal(t.size)
    return speech.astype(np.float32)


def _wav(samples: np.ndarray) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, samples, RATE, format="WAV", subtype="FLOAT")
    return buf.getvalue()


def release_rows() -> list[dict[str, Any]]:
    rows = []
    for conv, task, modification, info, hz in RELEASE:
        audio = _wav(_recording(hz, noisy=bool(modification)))
        if conv == "f6a8":
            audio = b"RIFF-not-really-a-wave"
        rows.append(
            {
                "audio": {"bytes": audio, "path": f"{conv}.wav"},
                "user_query": f"Spoken query number {hz:.0f}",
                "taskType": task,
                "checklist": "1. Answers the question\n2. Stays on topic",
                "conversation_hash": conv,
                "modification_type": modification,
                "additional_info": info,
            }
        )
    return rows


def write_parquet(rows: list[dict[str, Any]], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def test_release_loads_unedited_with_ids_conditions_and_subtypes(tmp_path: Path) -> None:
    data = write_parquet(release_rows(), tmp_path / "release" / "data" / "test-00000.parquet")
    result = import_wildspeech(tmp_path / "release", audio_dir=tmp_path / "audio")
    got = {q.id: (q.category, q.subcategory, q.condition) for q in result.queries}
    assert got == {
        "a1f3": ("II", None, "clean"),
        "b2e4": ("SR", None, "natural_noise"),
        "c3d5": ("OE", None, "human_noise"),
        "d4c6": ("PF", "stutter", "clean"),
        "e5b7": ("PF", "pause", "natural_noise"),
    }
    assert [(r.file, r.row, r.field) for r in result.rejects] == [(str(data), 6, "audio")]
    first = result.queries[0]
    assert first.checklist == ["Answers the question", "Stays on topic"]
    assert first.metadata["conversation_hash"] == "a1f3"
    # the embedded bytes are decoded unchanged
    expected = _recording(220.0, noisy=False)
    assert np.allclose(read_audio(first.audio or "").samples, expected, atol=1e-6)


def test_failed_import_leaves_no_file_behind(tmp_path: Path) -> None:
    bad = [r for r in release_rows() if r["conversation_hash"] == "f6a8"]
    good = release_rows()[0]
    rows = [{**good, "user_query": ""}, *bad]  # its audio would decode, its text is missing
    write_parquet(rows, tmp_path / "bad.parquet")
    cli = CliRunner()
    result = cli.invoke(
        app,
        ["wildspeech-suite", str(tmp_path / "bad.parquet"), "-o", str(tmp_path / "suite")],
        env={"VOXEVAL_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())  # the console folds long lines at its width
    assert "row 1: user_query" in said and "row 2: audio" in said
    assert not (tmp_path / "suite").exists() and not (tmp_path / "cache").exists()


def test_reordered_rows_keep_text_and_audio_together(tmp_path: Path) -> None:
    rows = release_rows()[:5]
    first = write_parquet(rows, tmp_path / "a" / "test.parquet")
    again = write_parquet(rows[::-1], tmp_path / "b" / "test.parquet")
    audio_dir = tmp_path / "audio"
    out = tmp_path / "built"

    def pairs(data: Path) -> dict[str, tuple[str, bytes]]:
        queries = import_wildspeech(data, audio_dir=audio_dir).queries
        return {q.id: (q.text, Path(q.audio or "").read_bytes()) for q in queries}

    assert pairs(first) == pairs(again)
    for conv, _, _, _, hz in RELEASE[:5]:
        text, wav = pairs(again)[conv]
        assert text == f"Spoken query number {hz:.0f}"
        samples, _ = sf.read(io.BytesIO(wav), dtype="float32")
        assert np.allclose(samples, _recording(hz, noisy=conv in ("b2e4", "c3d5", "e5b7")))
    # the build cache follows the content: the reordered release reuses every rendering
    built = build_suite(write_wildspeech_suite(first, tmp_path / "s1"), out, progress=False)
    assert built.rendered == 5
    rebuilt = build_suite(write_wildspeech_suite(again, tmp_path / "s2"), out, progress=False)
    assert (rebuilt.rendered, rebuilt.cached) == (0, 5)


class Loopback:
    """ASR and judge on 127.0.0.1: every transcript is the same, every judgement 7."""

    def __call__(self, path: str, body: Any) -> FakeResponse:
        if path.endswith("/audio/transcriptions"):
            return FakeResponse(json_body={"text": "Here is a helpful answer."})
        return chat_text("Covers the checklist.\nScore: 7")


@pytest.mark.models
def test_release_runs_end_to_end_under_its_own_conditions(tmp_path: Path) -> None:
    write_parquet(release_rows(), tmp_path / "release" / "test.parquet")
    cli = CliRunner()
    env = {"VOXEVAL_CACHE_DIR": str(tmp_path / "cache")}
    made = cli.invoke(
        app, ["wildspeech-suite", str(tmp_path / "release"), "-o", str(tmp_path / "suite")], env=env
    )
    assert made.exit_code == 0, made.output
    assert "loaded 5 rows, rejected 1" in made.output and "row 6: audio" in made.output
    replies = tmp_path / "replies"
    for conv, *_ in RELEASE:
        write_audio(Audio(_recording(500.0, noisy=False), RATE), replies / f"{conv}.wav")
        (replies / f"{conv}.txt").write_text("Here is a helpful answer.")
    with FakeOpenAIServer(Loopback()) as server:
        config = {
            "suite": "suite",  # relative to this config file
            "systems": [{"name": "sut", "type": "replay", "folder": "replies"}],
            "judge": {"provider": "openai", "base_url": server.url, "model": "judge"},
            "asr": {"provider": "openai", "base_url": server.url},
            "metrics": ["checklist", "duration"],
            "cache_dir": "cache",
        }
        (tmp_path / "run.yaml").write_text(yaml.safe_dump(config))
        out = tmp_path / "out"
        result = cli.invoke(app, ["run", str(tmp_path / "run.yaml"), "--out", str(out)], env=env)
    assert result.exit_code == 0, result.output
    units = sorted(p.parent.parent.name for p in (out / "items").glob("*/sut/0"))
    assert len(units) == 5  # one per readable row, not one per row and condition
    summary = json.loads((out / "report" / "summary.json").read_text())["systems"]["sut"]
    by_condition = {c: v["checklist"]["n"] for c, v in summary["by_condition"].items()}
    assert by_condition == {"clean": 2, "natural_noise": 2, "human_noise": 1}
    assert summary["overall"]["checklist"]["mean"] == pytest.approx(7.0)
    assert set(summary["by_pf_subcategory"]) == {"stutter", "pause"}
    # what the system heard is the released recording, with no noise added
    noisy = next((out / "items").glob("b2e4__*/sut/0"))
    heard = read_audio(noisy / "user.wav").samples
    released = _recording(260.0, noisy=True)
    assert heard.size == released.size
    assert np.corrcoef(heard, released)[0, 1] > 0.9999
