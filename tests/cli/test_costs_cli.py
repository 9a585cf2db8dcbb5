"""`voxeval costs`: a finished run priced again with another table (nothing called) changes
report/costs.json and the report's Costs section, never a score."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse, chat_text
from voxeval.audio import Audio, audio_to_wav_bytes, write_audio
from voxeval.cli.main import app

ANSWER = "Boil the egg for eight minutes."


def tone(seconds: float, hz: float) -> Audio:
    t = np.arange(int(16000 * seconds)) / 16000
    return Audio((0.3 * np.sin(2 * np.pi * hz * t)).astype(np.float32), 16000)


def respond(path: str, body: Any) -> FakeResponse:
    if path.endswith("/reply"):
        wav = base64.b64encode(audio_to_wav_bytes(tone(1.5, 300))).decode()
        return FakeResponse(json_body={"audio": wav, "text": ANSWER})
    if path.endswith("/audio/transcriptions"):
        return FakeResponse(json_body={"text": ANSWER})
    return chat_text("Strengths: direct.\nScore: 8", prompt_tokens=1000, completion_tokens=100)


@pytest.fixture
def server() -> Any:
    with FakeOpenAIServer(respond) as fake:
        yield fake


def write_run(tmp_path: Path, url: str) -> Path:
    write_audio(tone(1.0, 200), tmp_path / "suite" / "q1.wav")
    suite = {
        "name": "one",
        "protocol": "single_turn",
        "queries": [{"id": "q1", "text": "How long do I boil an egg?", "category": "SR",
                     "audio": "q1.wav", "checklist": ["Gives 6-10 minutes"]}],
    }  # fmt: skip
    (tmp_path / "suite" / "suite.yaml").write_text(yaml.safe_dump(suite))
    (tmp_path / "prices_a.yaml").write_text(
        yaml.safe_dump(
            {
                "models": [
                    {"kind": "system", "provider": "http", "per_request": 0.01},
                    {"kind": "llm", "provider": "openai", "model": "judge-*",
                     "input_per_1m_tokens": 1.0, "output_per_1m_tokens": 10.0},
                    {"kind": "asr", "provider": "openai", "audio_in_per_minute": 0.006},
                ]
            }
        )
    )  # fmt: skip
    config = {
        "suite": str(tmp_path / "suite"),
        "systems": [{"name": "live", "type": "http", "url": url + "/reply"}],
        "judge": {"provider": "openai", "base_url": url, "model": "judge-1"},
        "asr": {"provider": "openai", "base_url": url},
        "metrics": ["checklist", "duration"],
        "scoring": {"k": 1},
        "build": {"profiles": 1, "conditions": ["clean"]},
        "trials": 2,
        "pricing": "prices_a.yaml",  # relative to the config file
        "cache_dir": str(tmp_path / "cache"),
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.models
def test_costs_are_priced_then_repriced_without_calling_anything(tmp_path, server) -> None:
    cli = CliRunner()
    out = tmp_path / "out"
    result = cli.invoke(app, ["run", str(write_run(tmp_path, server.url)), "--out", str(out)])
    assert result.exit_code == 0, result.output
    costs = json.loads((out / "report" / "costs.json").read_text())
    by_model = costs["by_model"]
    # two trials: 2 replies of the http system, 2 judge calls; the ASR decodes the 1.5 s
    # reply once (the second trial's identical reply is a cache hit: nothing run, no cost)
    assert by_model["system:http"]["calls"] == 2
    assert by_model["system:http"]["audio_in_s"] == pytest.approx(2.0, abs=0.05)
    assert by_model["system:http"]["audio_out_s"] == pytest.approx(3.0, abs=0.01)
    assert by_model["llm:openai:judge-1"]["prompt_tokens"] == 2000
    assert by_model["asr:openai:whisper-1"]["audio_in_s"] == pytest.approx(1.5, abs=0.01)
    judge = 2 * (1000 * 1.0 + 100 * 10.0) / 1e6
    asr = 1.5 / 60 * 0.006
    assert costs["total"]["cost_usd"] == pytest.approx(2 * 0.01 + judge + asr, rel=1e-3)
    assert costs["total"]["complete"] is True and costs["unpriced"] == {}
    assert costs["by_system"]["live"]["units"] == 2
    assert costs["by_system"]["live"]["cost_per_unit_usd"] == pytest.approx(
        costs["total"]["cost_usd"] / 2
    )
    assert set(costs["by_component"]) == {"system:live", "judge", "scoring_asr"}
    summary = json.loads((out / "report" / "summary.json").read_text())
    assert summary["usage"]["by_provider"]["system:live"]["audio_out_s"] == pytest.approx(
        3.0, abs=0.01
    )
    scores_before = (out / "report" / "scores.csv").read_text()
    overall_before = summary["systems"]["live"]["overall"]
    md = (out / "report" / "summary.md").read_text()
    assert "## Costs" in md and "prices_a.yaml" in md

    # A new table: the system at 0.05 a request, the judge and ASR not listed (unpriced).
    requests_before = len(server.requests)
    prices_b = tmp_path / "prices_b.yaml"
    prices_b.write_text(
        "include_defaults: false\nmodels:\n  - {kind: system, provider: http, per_request: 0.05}\n"
    )
    again = cli.invoke(app, ["costs", str(out), "--prices", str(prices_b), "--json"])
    assert again.exit_code == 0, again.output
    assert len(server.requests) == requests_before  # nothing was called
    repriced = json.loads((out / "report" / "costs.json").read_text())
    assert json.loads(again.output) == repriced
    assert repriced["total"]["cost_usd"] == pytest.approx(0.10)
    assert repriced["total"]["complete"] is False
    assert set(repriced["unpriced"]) == {"llm:openai:judge-1", "asr:openai:whisper-1"}
    md = (out / "report" / "summary.md").read_text()
    assert "prices_b.yaml" in md and "llm:openai:judge-1 — used by judge" in md
    assert (out / "report" / "scores.csv").read_text() == scores_before
    summary = json.loads((out / "report" / "summary.json").read_text())
    assert summary["systems"]["live"]["overall"] == overall_before
    assert summary["costs"] == repriced

    tables = cli.invoke(app, ["costs", str(out), "--prices", str(prices_b)])
    assert tables.exit_code == 0, tables.output
    assert "system:http" in tables.output and "unpriced" in tables.output
