"""The speech commands through the installed ``voxeval`` entry point and Typer's runner."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from voxeval.audio import read_audio
from voxeval.cli.main import app

VOXEVAL = Path(sys.executable).with_name("voxeval")
runner = CliRunner()


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(VOXEVAL), *args], capture_output=True, text=True, timeout=300, check=False
    )


@pytest.mark.models
@pytest.mark.skipif(not VOXEVAL.exists(), reason="voxeval entry point not installed")
def test_doctor_json_lists_every_provider_kind() -> None:
    proc = run_cli("doctor", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert all(set(r) == {"kind", "name", "available", "reason"} for r in rows)
    table = {(r["kind"], r["name"]): r for r in rows}
    for key in [("asr", "whisper-tiny-en"), ("asr", "whisper-base"), ("tts", "piper")]:
        assert table[key]["available"] is True, table[key]
    assert table[("asr", "openai")]["available"] is False
    assert "base_url" in table[("asr", "openai")]["reason"]
    assert {r["kind"] for r in rows} >= {"asr", "tts", "llm"}


@pytest.mark.models
def test_doctor_table_and_voices_json() -> None:
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 0, result.output
    assert "whisper-tiny-en" in result.output
    voices = runner.invoke(app, ["voices", "--json"])
    assert voices.exit_code == 0
    names = {v["name"] for v in json.loads(voices.stdout)}
    assert "piper:joe" in names


@pytest.mark.models
@pytest.mark.skipif(not VOXEVAL.exists(), reason="voxeval entry point not installed")
def test_synth_then_transcribe_json(tmp_path: Path) -> None:
    wav = tmp_path / "speech.wav"
    # synth in this process (Typer's runner): one fresh process, the entry point's transcribe
    # with its JSON on stdout, is enough to prove the installed command (each costs ~6 s CPU
    # of imports alone)
    synth = runner.invoke(
        app,
        ["synth", "Please call me back tomorrow morning.", "--voice", "piper:joe", "-o", str(wav)],
    )
    assert synth.exit_code == 0, synth.output
    audio = read_audio(wav)
    assert audio.rate == 22050 and audio.duration > 1.0
    proc = run_cli("transcribe", str(wav), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["text"].lower().startswith("please call me back tomorrow")
    assert data["provider"] == "whisper-tiny-en"
    assert data["language"] == "en"
    assert data["words"][0]["text"] == "Please"


@pytest.mark.models
def test_synth_with_profile_and_errors(tmp_path: Path) -> None:
    wav = tmp_path / "p.wav"
    result = runner.invoke(app, ["synth", "Hello", "--profile", "male,adult,dark", "-o", str(wav)])
    assert result.exit_code == 0, result.output
    assert read_audio(wav).duration > 0.2
    bad = runner.invoke(app, ["transcribe", str(tmp_path / "missing.wav")])
    assert bad.exit_code == 2
    assert "file not found" in " ".join(bad.output.split())
    unknown = runner.invoke(app, ["transcribe", str(wav), "--asr", "nope"])
    assert unknown.exit_code == 2 and "known:" in unknown.output


@pytest.mark.models
def test_mos_json_prints_the_model_fields(tmp_path: Path, tone) -> None:  # type: ignore[no-untyped-def]
    from voxeval.audio import write_audio
    from voxeval.config import ProviderSpec
    from voxeval.providers import availability

    if not availability("mos", ProviderSpec(provider="dnsmos")).available:
        pytest.skip("dnsmos is not available")
    wav = write_audio(tone, tmp_path / "tone.wav")
    result = runner.invoke(app, ["mos", str(wav), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert 1.0 <= data["overall"] <= 5.0
    assert set(data["scores"]) <= set(data)
    assert data["model"]


@pytest.mark.models
def test_doctor_reports_the_call_extras(monkeypatch: pytest.MonkeyPatch) -> None:
    from importlib import metadata

    from voxeval.cli import commands_speech

    real = metadata.version

    def without_pipecat(name: str) -> str:
        if name == "pipecat-ai":
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(metadata, "version", without_pipecat)
    rows = {r["extra"]: r for r in commands_speech.extra_status()}
    assert set(rows) == {"mcp", "pipecat", "webrtc"}
    assert rows["pipecat"]["installed"] is False and rows["pipecat"]["version"] is None
    assert rows["mcp"]["installed"] is True and rows["mcp"]["version"] == real("mcp")
    result = runner.invoke(app, ["doctor"])
    assert result.exit_code == 0, result.output
    assert "optional extras" in result.output
    assert "mcp" in result.output and "pipecat" in result.output
