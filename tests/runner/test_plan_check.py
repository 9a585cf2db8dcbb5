"""Every config mistake is caught before the first call: one error listing each problem with
its file and field, exit 2, no run folder, and zero requests to the system or the judge."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from tests.fakes.openai_server import FakeOpenAIServer, FakeResponse
from tests.runner.toy_protocol import ToyProtocol
from tests.simulation.helpers import scenario, write_suite
from voxeval.audio import Audio, write_audio
from voxeval.cli.main import app
from voxeval.config import load_run_config
from voxeval.errors import ConfigError
from voxeval.registry import register
from voxeval.runner.plan_check import validate_plan

Config = dict[str, Any]


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    """Answers anything with HTTP 500: a test passes only if nothing is ever sent."""
    with FakeOpenAIServer(lambda path, body: FakeResponse(status=500)) as fake:
        yield fake


def single_turn_config(tmp: Path, url: str) -> Config:
    """A valid single-turn config: an HTTP system, a replay system, a judge and a scoring ASR
    on the loopback server, two recorded queries rendered clean with one profile."""
    tone = Audio((0.3 * np.sin(np.arange(16000) / 10)).astype(np.float32), 16000)
    write_audio(tone, tmp / "suite" / "q1.wav")
    suite = {
        "name": "one",
        "protocol": "single_turn",
        "queries": [{"id": "q1", "text": "Hi?", "category": "II", "audio": "q1.wav"}],
    }
    (tmp / "suite" / "suite.yaml").write_text(yaml.safe_dump(suite))
    write_audio(tone, tmp / "replies" / "q1.wav")
    return {
        "suite": str(tmp / "suite"),
        "systems": [
            {"name": "live", "type": "http", "url": url + "/reply"},
            {"name": "recorded", "type": "replay", "folder": str(tmp / "replies")},
        ],
        "judge": {"provider": "openai", "base_url": url, "model": "judge"},
        "asr": {"provider": "openai", "base_url": url},
        "metrics": ["checklist", "wer", "duration"],
        "build": {"profiles": 1, "conditions": ["clean"]},
        "cache_dir": str(tmp / "cache"),
    }


def live_call_config(tmp: Path) -> Config:
    suite = write_suite(tmp / "calls", [scenario("book-1")])
    return {
        "suite": str(suite),
        "systems": [{"name": "good", "type": "scripted"}],
        "simulation": {"caller": "scripted", "mode": "text"},
        "perturbations": [{"name": "persona", "persona": "elderly_slow"}],
    }


def write(tmp: Path, config: Config) -> Path:
    path = tmp / "cfg.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def problems_of(path: Path) -> str:
    """The plan check's message for the config at ``path`` ('' when it passes)."""
    try:
        validate_plan(load_run_config(path))
    except ConfigError as exc:
        return str(exc)
    return ""


def assert_refused_before_any_call(path: Path, server: FakeOpenAIServer, tmp: Path) -> str:
    out = tmp / "run"
    before = sorted(tmp.rglob("*"))
    result = CliRunner().invoke(app, ["run", str(path), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert sorted(tmp.rglob("*")) == before  # nothing written: no run folder, no rendering
    assert server.requests == []  # nothing called
    return result.output


def test_a_valid_single_turn_config_passes(tmp_path: Path, server: FakeOpenAIServer) -> None:
    assert problems_of(write(tmp_path, single_turn_config(tmp_path, server.url))) == ""


def _set(path: str, value: Any) -> Callable[[Config], None]:
    def change(config: Config) -> None:
        *parents, last = path.split(".")
        node: Any = config
        for part in parents:
            node = node[int(part)] if part.isdigit() else node.setdefault(part, {})
        node[last] = value

    return change


# (how the valid config is broken, the field the error must name, words it must contain)
SINGLE_TURN_MISTAKES = {
    "unknown system type": (_set("systems.0.type", "htp"), "systems.0 (live).type", "htp"),
    "unknown system option": (_set("systems.0.timeout", 3), "systems.0 (live)", "timeout"),
    "bad system option value": (_set("systems.0.url", "ftp://x"), "systems.0 (live)", "url"),
    "unset header variable": (
        _set("systems.0.headers_env", {"X-Token": "VOXEVAL_TEST_UNSET_TOKEN"}),
        "systems.0 (live).headers_env.X-Token",
        "VOXEVAL_TEST_UNSET_TOKEN is not set",
    ),
    "unknown judge provider": (_set("judge.provider", "opneai"), "judge", "'opneai'"),
    "unknown judge option": (_set("judge.temprature", 0), "judge", "temprature"),
    "unknown asr option": (_set("asr.modle", "w"), "asr", "modle"),
    "unknown metric": (_set("metrics", ["checklist", "bogus"]), "metrics.1", "'bogus'"),
    "metric of another protocol": (
        _set("metrics", ["task_completion"]),
        "metrics.0",
        "does not apply to the single_turn protocol",
    ),
    "scoring k below 1": (_set("scoring", {"k": 0}), "scoring", "k: Input should be greater"),
    "unknown scoring option": (_set("scoring", {"kk": 2}), "scoring", "kk"),
    "seed true": (_set("seed", True), "seed", "valid integer"),
    "negative seed": (_set("seed", -5), "seed", "greater than or equal to 0"),
    "missing replay folder": (
        _set("systems.1.folder", "no-such-replies"),  # relative to the config: under tmp
        "systems.1 (recorded)",
        "does not exist",
    ),
    "missing prebuilt folder": (
        _set("build", {"dir": "no-such-built"}),
        "build.dir",
        "no prebuilt",
    ),
    "unknown build engine": (_set("build.engines", ["piperr"]), "build.engines.0", "piperr"),
    "perturbations in single turn": (
        _set("perturbations", [{"name": "nosie"}]),
        "perturbations",
        "does not use this section",
    ),
    "unknown condition": (_set("conditions", ["noisy"]), "conditions.0", "'noisy'"),
}


@pytest.mark.parametrize("mistake", list(SINGLE_TURN_MISTAKES))
def test_single_turn_mistake_is_refused_before_any_call(
    mistake: str, tmp_path: Path, server: FakeOpenAIServer
) -> None:
    change, field, words = SINGLE_TURN_MISTAKES[mistake]
    config = single_turn_config(tmp_path, server.url)
    change(config)
    path = write(tmp_path, config)
    message = problems_of(path)
    line = next((ln for ln in message.splitlines() if ln.startswith(f"{path}: {field}:")), None)
    assert line is not None, message
    assert words in line, message
    assert_refused_before_any_call(path, server, tmp_path)


LIVE_CALL_MISTAKES = {
    "unknown perturbation": (
        _set("perturbations", [{"name": "persona", "persona": "default"}, {"name": "nosie"}]),
        "perturbations.1",
        "unknown perturbation 'nosie'",
    ),
    "unknown perturbation option": (
        _set("perturbations", [{"name": "noise", "snr": 3}]),
        "perturbations.0",
        "snr",
    ),
    "unknown agent": (_set("systems.0.type", "scriptd"), "systems.0 (good).type", "'scriptd'"),
    "unknown agent option": (
        _set("systems", [{"name": "c", "type": "cascade", "llm": "smollm2", "temprature": 1}]),
        "systems.0 (c)",
        "temprature: unknown option",
    ),
    "unknown agent provider": (
        _set("systems", [{"name": "c", "type": "cascade", "llm": {"provider": "gtp"}}]),
        "systems.0 (c).llm",
        "unknown llm provider 'gtp'",
    ),
    "unknown caller": (_set("simulation.caller", "robot"), "simulation.caller", "'robot'"),
    "unknown persona": (_set("simulation.persona", "grumpy"), "simulation.persona", "'grumpy'"),
    "single-turn metric": (
        _set("metrics", ["task_completion", "checklist"]),
        "metrics.1",
        "does not apply to the live_call protocol",
    ),
    "undefined condition": (_set("conditions", ["clean", "noisy"]), "conditions.1", "'noisy'"),
    "judge repeats below one": (
        _set("scoring", {"judge_repeats": 0}),
        "scoring",
        "judge_repeats: Input should be greater than or equal to 1",
    ),
    "unknown live-call scoring option": (
        _set("scoring", {"judge_repeat": 2}),
        "scoring",
        "judge_repeat: Extra inputs are not permitted",
    ),
    "build section in live call": (
        _set("build", {"profiles": 2}),
        "build",
        "does not use this section",
    ),
}


@pytest.mark.parametrize("mistake", list(LIVE_CALL_MISTAKES))
def test_live_call_mistake_is_refused_before_any_call(
    mistake: str, tmp_path: Path, server: FakeOpenAIServer
) -> None:
    change, field, words = LIVE_CALL_MISTAKES[mistake]
    config = live_call_config(tmp_path)
    change(config)
    path = write(tmp_path, config)
    message = problems_of(path)
    line = next((ln for ln in message.splitlines() if ln.startswith(f"{path}: {field}:")), None)
    assert line is not None, message
    assert words in line, message
    assert_refused_before_any_call(path, server, tmp_path)


def test_every_problem_is_listed_at_once(tmp_path: Path, server: FakeOpenAIServer) -> None:
    config = single_turn_config(tmp_path, server.url)
    config["systems"][0]["type"] = "htp"
    config["systems"][1]["folder"] = str(tmp_path / "gone")
    config["judge"]["provider"] = "opneai"
    config["metrics"] = ["bogus"]
    config["scoring"] = {"k": 0}
    path = write(tmp_path, config)
    message = problems_of(path)
    assert message.startswith("5 problems in the run plan; nothing was run")
    fields = [line.split(": ")[1] for line in message.splitlines()[1:]]
    assert fields == [
        "judge",
        "systems.0 (live).type",
        "systems.1 (recorded)",
        "scoring",
        "metrics.0",
    ]
    assert_refused_before_any_call(path, server, tmp_path)


def test_judge_whose_key_variable_is_unset_is_refused(
    tmp_path: Path, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VOXEVAL_TEST_UNSET_KEY", raising=False)
    config = single_turn_config(tmp_path, server.url)
    config["judge"]["api_key_env"] = "VOXEVAL_TEST_UNSET_KEY"
    message = problems_of(write(tmp_path, config))
    assert "judge: llm provider 'openai' cannot run here" in message
    assert "VOXEVAL_TEST_UNSET_KEY" in message


def test_the_packaged_tiny_model_is_refused_as_judge(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    config = single_turn_config(tmp_path, server.url)
    config["judge"] = {"provider": "smollm2"}
    message = problems_of(write(tmp_path, config))
    assert "judge.provider: refused as a judge: SmolLM2-135M judges at chance level" in message


def test_the_run_context_never_hands_out_a_refused_judge(tmp_path: Path) -> None:
    from voxeval.api.context import RunContext
    from voxeval.config import RunConfig
    from voxeval.store import RunStore

    config = RunConfig(
        suite="x", systems=[{"name": "s", "type": "replay"}], judge={"provider": "smollm2"}
    )
    ctx = RunContext(config=config, store=RunStore(tmp_path / "run"))
    assert ctx.judge() is None
    assert "judge refused: SmolLM2-135M" in (ctx.judge_unavailable_reason() or "")


def test_validate_command_runs_only_the_check(tmp_path: Path, server: FakeOpenAIServer) -> None:
    config = single_turn_config(tmp_path, server.url)
    path = write(tmp_path, config)
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    assert f"{path}: OK: suite one (single_turn); systems: live (http), recorded (replay)" in (
        result.stdout
    )
    config["scoring"] = {"k": 0}
    result = CliRunner().invoke(app, ["validate", str(write(tmp_path, config))])
    assert result.exit_code == 2
    assert "problem in the run plan" in result.output
    assert server.requests == []
    assert not (tmp_path / "suite_audio").exists() and not (tmp_path / "runs").exists()


def test_rescore_checks_metric_names_first(tmp_path: Path) -> None:
    config = live_call_config(tmp_path)
    config["perturbations"] = []
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["run", str(write(tmp_path, config)), "--out", str(out)])
    assert result.exit_code == 0, result.output
    scores = sorted(p.read_text() for p in out.rglob("scores.json"))
    result = CliRunner().invoke(app, ["score", str(out), "--metrics", "task_completion,bogus"])
    assert result.exit_code == 2
    assert "--metrics.1: unknown metric 'bogus'" in " ".join(result.output.split())
    assert sorted(p.read_text() for p in out.rglob("scores.json")) == scores  # untouched


@register("protocol", "plan-check-plugin")
class PluginProtocol(ToyProtocol):
    """A plugin protocol with its own plan check (the toy's steps; only its check runs)."""

    name = "plan-check-plugin"

    def check_plan(self, config: Any) -> list[str]:
        return [f"systems.{i}: {s.name} is not welcome" for i, s in enumerate(config.systems)]


def test_a_plugin_protocol_adds_its_own_checks(tmp_path: Path) -> None:
    (tmp_path / "suite.yaml").write_text("protocol: plan-check-plugin\n")
    config = {"suite": "suite.yaml", "systems": [{"name": "x", "type": "anything"}]}
    path = write(tmp_path, config)
    assert problems_of(path).splitlines()[1:] == [f"{path}: systems.0: x is not welcome"]


def test_a_bad_price_table_is_refused_before_any_call(
    tmp_path: Path, server: FakeOpenAIServer
) -> None:
    (tmp_path / "prices.yaml").write_text("models:\n  - {kind: llm, per_token: 1}\n")
    config = {**single_turn_config(tmp_path, server.url), "pricing": "prices.yaml"}
    output = assert_refused_before_any_call(write(tmp_path, config), server, tmp_path)
    assert "pricing" in output and "prices.yaml" in output and "per_token" in output
