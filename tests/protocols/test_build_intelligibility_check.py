"""`voxeval build` hears its own clean queries with Whisper base (real speech, real models)
and warns about a profile whose queries are misheard above the limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from voxeval.audio import write_audio
from voxeval.benchmarks.build_manifest import RenderedQuery
from voxeval.benchmarks.wildspeech.spoken_query import SpokenQuery
from voxeval.config import ProviderSpec
from voxeval.protocols.input_intelligibility import check_built_suite
from voxeval.providers import create_provider
from voxeval.providers.factory import availability

pytestmark = pytest.mark.models
if not all(
    availability(kind, ProviderSpec(provider=name)).available
    for kind, name in (("tts", "piper"), ("asr", "whisper-base"), ("mos", "dnsmos"))
):
    pytest.skip("needs Piper, Whisper base and DNSMOS", allow_module_level=True)

TEXT = "Please tell me where the nearest train station is."


def _item(tmp_path: Path, profile: str, spoken: str) -> RenderedQuery:
    path = tmp_path / f"{profile}.wav"
    write_audio(create_provider("tts", "piper").synthesize(spoken), path)
    query = SpokenQuery(id="q1", text=TEXT, category="SR")
    entry = {"item_id": f"q1__{profile}", "voice": "piper:joe"}
    return RenderedQuery(query, profile, "clean", path, entry)


def test_a_profile_whose_speech_says_something_else_is_over_the_limit(tmp_path: Path) -> None:
    items = [
        _item(tmp_path, "clear", TEXT),
        _item(tmp_path, "misheard", "The weather in the mountains was cold and windy."),
    ]
    checked = check_built_suite(items, cache=None)
    assert checked["asr"] == "whisper-base"
    assert checked["by_profile"]["clear"]["corpus_wer"] <= 0.1
    assert checked["by_profile"]["misheard"]["corpus_wer"] > 0.5
    assert checked["over_limit"] == ["misheard"]
    ovrl = checked["by_profile"]["clear"]["dnsmos_ovrl"]
    assert 2.5 < ovrl["mean"] < 4.5 and ovrl["n"] == 1


def test_cli_build_writes_the_check_and_warns(tmp_path: Path) -> None:
    from voxeval.cli.main import app

    suite = tmp_path / "suite.yaml"
    query = {"id": "q1", "text": TEXT, "category": "SR", "checklist": ["Books it."]}
    suite.write_text(yaml.safe_dump({"name": "t", "protocol": "single_turn", "queries": [query]}))
    args = ["build", str(suite), "-o", str(tmp_path / "out"), "--profiles", "male-adult-dark"]
    args += ["--engines", "piper", "--conditions", "clean"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    checked = json.loads((tmp_path / "out" / "intelligibility.json").read_text())
    stat = checked["by_profile"]["male-adult-dark"]
    assert stat["n"] == 1 and stat["corpus_wer"] <= 0.15  # Piper's own voice, unshifted
    output = " ".join(result.output.split())
    assert "clean queries heard by whisper-base" in output and "warning" not in output
    quiet = CliRunner().invoke(app, [*args, "--no-check"])
    assert quiet.exit_code == 0 and "heard by" not in quiet.output
