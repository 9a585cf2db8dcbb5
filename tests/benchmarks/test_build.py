"""The builder: deterministic by seed, idempotent, manifest records every choice."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from voxeval.api.context import RunContext
from voxeval.audio import read_audio
from voxeval.benchmarks.build import build_suite, prepare_suite_audio
from voxeval.benchmarks.build_manifest import load_built_suite
from voxeval.benchmarks.build_options import PROFILE_GRID, BuildOptions, profile_label
from voxeval.config import ProviderSpec, parse_run_config
from voxeval.errors import ConfigError
from voxeval.protocols.single_turn import SingleTurnProtocol
from voxeval.providers.factory import availability
from voxeval.store import RunStore

pytest.importorskip("librosa")
if not availability("tts", ProviderSpec(provider="espeak")).available:
    pytest.skip("espeak-ng is not installed", allow_module_level=True)

QUERIES = [
    {
        "id": "a",
        "text": "What is the capital of France?",
        "category": "II",
        "checklist": ["Paris."],
    },
    {
        "id": "b",
        "text": "What is two plus three times four?",
        "category": "PF",
        "subcategory": "pause",
        "checklist": ["20."],
        "render": {"marks": [{"kind": "pause", "word": "three", "ms": 500}]},
    },
]
OPTIONS = BuildOptions(profiles=2, engines=["espeak"], seed=5)


def _suite(folder: Path, queries: list[dict] = QUERIES) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "suite.yaml"
    path.write_text(yaml.safe_dump({"name": "tiny", "protocol": "single_turn", "queries": queries}))
    return path


def _manifest(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "manifest.jsonl").read_text().splitlines()]


def test_profile_grid_is_16_distinct_and_prefixes_are_balanced() -> None:
    labels = [profile_label(p) for p in PROFILE_GRID]
    assert len(set(labels)) == 16
    assert {p.gender for p in PROFILE_GRID[:2]} == {"male", "female"}
    assert {p.age for p in PROFILE_GRID[:8]} == {"child", "adolescent", "adult", "senior"}


def test_build_is_deterministic_and_idempotent(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "s")
    first = build_suite(suite, tmp_path / "one", OPTIONS, progress=False)
    assert (first.rendered, first.cached, len(first.items)) == (12, 0, 12)
    again = build_suite(suite, tmp_path / "one", OPTIONS, progress=False)
    assert (again.rendered, again.cached) == (0, 12)
    other = build_suite(suite, tmp_path / "two", OPTIONS, progress=False)
    for x, y in zip(_manifest(tmp_path / "one"), _manifest(tmp_path / "two"), strict=True):
        assert x == y
        assert (tmp_path / "one" / x["audio"]).read_bytes() == (
            tmp_path / "two" / y["audio"]
        ).read_bytes()
    assert other.rendered == 12
    reseeded = build_suite(
        suite, tmp_path / "three", OPTIONS.model_copy(update={"seed": 6}), progress=False
    )
    offsets = lambda b: [i.entry.get("noise", {}).get("offset_s") for i in b.items]  # noqa: E731
    assert offsets(reseeded) != offsets(first)


def test_manifest_records_every_choice(tmp_path: Path) -> None:
    built = build_suite(_suite(tmp_path / "s"), tmp_path / "out", OPTIONS, progress=False)
    by_condition = {i.condition: i for i in built.items if i.query.id == "b"}
    assert set(by_condition) == {"clean", "natural_noise", "human_noise"}
    noisy = by_condition["natural_noise"].entry
    for key in (
        "voice",
        "transform",
        "distance",
        "noise",
        "noise_ratio",
        "snr_db",
        "seed",
        "params_hash",
    ):
        assert key in noisy, key
    assert noisy["noise_ratio"] == 0.5 and noisy["snr_db"] == pytest.approx(6.021, abs=0.01)
    assert {"category", "label", "origin", "offset_s", "seed"} <= set(noisy["noise"])
    assert by_condition["human_noise"].entry["noise"]["category"] == "human_noise"
    assert by_condition["clean"].entry["marks_applied"][0]["kind"] == "pause"
    clean = read_audio(by_condition["clean"].audio_path)
    mixed = read_audio(by_condition["natural_noise"].audio_path)
    assert clean.num_samples == mixed.num_samples
    assert not np.array_equal(clean.samples, mixed.samples)


def test_snr_option_sets_the_measured_snr(tmp_path: Path) -> None:
    options = OPTIONS.model_copy(update={"snr_db": 10.0, "conditions": ["clean", "natural_noise"]})
    built = build_suite(_suite(tmp_path / "s"), tmp_path / "out", options, progress=False)
    item = next(i for i in built.items if i.condition == "natural_noise")
    clean = next(i for i in built.items if i.item_id == item.item_id and i.condition == "clean")
    s = read_audio(clean.audio_path).samples.astype(np.float64)
    n = read_audio(item.audio_path).samples.astype(np.float64) - s
    assert 10 * np.log10(np.mean(s**2) / np.mean(n**2)) == pytest.approx(10.0, abs=0.3)
    assert item.entry["snr_db"] == 10.0 and item.entry["noise_ratio"] is None


def test_changing_a_query_rerenders_only_its_items(tmp_path: Path) -> None:
    out = tmp_path / "out"
    build_suite(_suite(tmp_path / "s"), out, OPTIONS, progress=False)
    changed = [QUERIES[0] | {"text": "What is the capital of Spain?"}, QUERIES[1]]
    rebuilt = build_suite(_suite(tmp_path / "s", changed), out, OPTIONS, progress=False)
    assert (rebuilt.rendered, rebuilt.cached) == (6, 6)


def test_loaded_items_and_prebuilt_reuse(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "s")
    build_suite(suite, tmp_path / "pre", OPTIONS.model_copy(update={"limit": 1}), progress=False)
    items = load_built_suite(tmp_path / "pre")
    assert len(items) == 6 and all(i.audio.exists() for i in items)
    assert len({i.id for i in items}) == 6
    reused = prepare_suite_audio(
        suite, tmp_path / "run", {"dir": str(tmp_path / "pre")}, conditions=["clean"]
    )
    assert (reused.rendered, len(reused.items)) == (0, 2)
    fresh = prepare_suite_audio(
        suite,
        tmp_path / "run",
        {"profiles": 1, "engines": ["espeak"]},
        seed=1,
        conditions=["clean"],
        progress=False,
    )
    assert fresh.out_dir == tmp_path / "run" / "suite_audio"
    assert (fresh.rendered, len(fresh.items)) == (2, 2)


@pytest.mark.models
def test_cli_build(tmp_path: Path) -> None:
    from voxeval.cli.main import app

    suite = _suite(tmp_path / "s")
    args = [
        "build",
        str(suite),
        "-o",
        str(tmp_path / "out"),
        "--profiles",
        "1",
        "--engines",
        "espeak",
        "--conditions",
        "clean,human_noise",
        "--no-check",  # the Whisper base check has its own tests (test_build_intelligibility_check)
        "--json",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout[result.stdout.index("{") :])
    assert summary["items"] == 4 and summary["rendered"] == 4
    bad = CliRunner().invoke(app, [*args[:4], "--conditions", "rainy"])
    assert bad.exit_code == 2
    assert "conditions" in bad.output


def test_babble_falls_back_to_other_tts_voices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import voxeval.benchmarks.noise_sources as sources

    monkeypatch.setattr(sources, "ASTERISK_DIR", tmp_path / "no-asterisk")
    options = OPTIONS.model_copy(update={"profiles": 1, "conditions": ["human_noise"], "limit": 1})
    built = build_suite(_suite(tmp_path / "s"), tmp_path / "out", options, progress=False)
    noise = built.items[0].entry["noise"]
    assert noise["origin"] == "tts voices"
    assert len(noise["parts"]) >= 3
    assert all(part.startswith("espeak:") for part in noise["parts"])
    assert built.items[0].voice not in noise["parts"]


def test_missing_prebuilt_folder_is_an_error_not_a_rebuild(tmp_path: Path) -> None:
    missing = tmp_path / "pre"
    with pytest.raises(ConfigError, match=r"build\.dir: .*pre: no prebuilt suite"):
        prepare_suite_audio(_suite(tmp_path / "s"), tmp_path / "run", {"dir": str(missing)})
    assert not missing.exists()


@pytest.mark.skipif(
    not availability("tts", ProviderSpec(provider="flite")).available, reason="flite missing"
)
def test_balanced_voices_leave_no_dimension_confounded_with_the_engine(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "s", QUERIES[:1])
    common = {"profiles": 4, "engines": ["espeak", "flite"], "conditions": ["clean"]}
    closest = build_suite(
        suite, tmp_path / "closest", {**common, "voice_choice": "closest"}, progress=False
    )
    # the closest voices: seniors are native espeak voices, adults flite
    assert {i.entry["profile_fields"]["age"]: i.entry["engine"] for i in closest.items} == {
        "adult": "flite",
        "senior": "espeak",
    }
    summary = json.loads((tmp_path / "closest" / "build.json").read_text())
    assert set(summary["confounded"]) == {"age", "timbre"}
    # the single-turn protocol's hook reads the same from the rendered folder (summary.json)
    config = parse_run_config(
        {
            "suite": str(suite),
            "systems": [{"name": "s", "type": "scripted"}],
            "build": {"dir": str(tmp_path / "closest")},
        }
    )
    ctx = RunContext(config=config, store=RunStore(tmp_path / "run"))
    assert SingleTurnProtocol().confounded(ctx) == summary["confounded"]
    assert summary["confounded"]["age"]["engines"] == {"adult": ["flite"], "senior": ["espeak"]}

    balanced = build_suite(suite, tmp_path / "balanced", common, progress=False)
    assert json.loads((tmp_path / "balanced" / "build.json").read_text())["confounded"] == {}
    ages: dict[str, set[str]] = {}
    for item in balanced.items:
        entry = item.entry
        ages.setdefault(entry["engine"], set()).add(entry["profile_fields"]["age"])
        assert entry["voice"].startswith(entry["engine"] + ":")
        native = entry["voice_fields"]["age"] == entry["profile_fields"]["age"]
        assert entry["speaker_source"] == ("native" if native else "transform")
        assert (entry["transform_text"] == "none") == native
    assert {"adult", "senior"} in ages.values()  # ages compared within one engine


def test_cli_profiles_lists_engines_and_confounds() -> None:
    from voxeval.cli.main import app

    args = ["profiles", "--engines", "espeak,flite", "--json"]
    closest = CliRunner().invoke(app, [*args, "--voice-choice", "closest"])
    assert closest.exit_code == 0, closest.output
    data = json.loads(closest.output)
    assert {r["profile"]: r["engine"] for r in data["profiles"]}["female-senior-dark"] == "espeak"
    assert "age" in data["confounded"]
    balanced = json.loads(CliRunner().invoke(app, args).output)
    assert balanced["confounded"] == {}
    for row in balanced["profiles"]:
        assert row["voice"].startswith(row["engine"] + ":")
        assert (row["source"] == "native") == (row["transform"] == "none")
