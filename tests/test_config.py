from pathlib import Path

import pytest

from voxeval.config import load_run_config, parse_run_config, read_yaml_afresh
from voxeval.errors import ConfigError


def test_valid_config_round_trips(tmp_path: Path) -> None:
    cfg = tmp_path / "run.yaml"
    cfg.write_text(
        "suite: wild-mini\n"
        "systems:\n  - {name: base, type: cascade, llm: {provider: smollm2}}\n"
        "judge: {provider: openai, base_url: 'http://127.0.0.1:1/v1', model: m, api_key_env: K}\n"
        "trials: 2\n"
    )
    run = load_run_config(cfg, overrides={"seed": 7, "limit": None})
    assert run.seed == 7
    assert run.trials == 2
    assert run.limit is None
    assert run.system("base").options() == {"llm": {"provider": "smollm2"}}
    assert run.judge is not None and run.judge.options()["model"] == "m"


def test_errors_name_the_file_and_field(tmp_path: Path) -> None:
    cfg = tmp_path / "bad.yaml"
    cfg.write_text("suite: x\nsystems: []\ntrials: 0\ntypo_field: 1\n")
    with pytest.raises(ConfigError) as info:
        load_run_config(cfg)
    message = str(info.value)
    assert f"{cfg}: systems:" in message
    assert f"{cfg}: trials:" in message
    assert f"{cfg}: typo_field:" in message


def test_relative_suite_path_resolves_against_config_folder(tmp_path: Path) -> None:
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "s.yaml").write_text("protocol: single_turn\n")
    cfg = tmp_path / "run.yaml"
    cfg.write_text("suite: ./suites/s.yaml\nsystems: [{name: a, type: replay}]\n")
    assert load_run_config(cfg).suite == str((tmp_path / "suites" / "s.yaml").resolve())


def test_top_level_must_be_a_mapping() -> None:
    with pytest.raises(ConfigError, match="<x>: expected a mapping"):
        parse_run_config(["not", "a", "mapping"], "<x>")


@pytest.mark.parametrize("name", ["usage", "systems"])
def test_system_names_reserved_by_the_summary_are_rejected(name: str) -> None:
    with pytest.raises(ConfigError, match="reserved"):
        parse_run_config({"suite": "s", "systems": [{"name": name, "type": "replay"}]})


def test_duplicate_system_names_are_rejected() -> None:
    systems = [{"name": "a", "type": "replay"}, {"name": "a", "type": "cascade"}]
    with pytest.raises(ConfigError, match="two systems are named 'a'"):
        parse_run_config({"suite": "s", "systems": systems})


def test_load_yaml_sees_edits_and_returns_independent_copies(tmp_path: Path) -> None:
    from voxeval.config import load_yaml

    f = tmp_path / "a.yaml"
    f.write_text("x: [1, 2]\n")
    first = load_yaml(f)
    first["x"].append(3)  # mutating one result must not leak into the next
    assert load_yaml(f) == {"x": [1, 2]}
    f.write_text("x: [1, 2, 3, 4]\n")  # different size: re-parsed
    assert load_yaml(f) == {"x": [1, 2, 3, 4]}


def test_relative_paths_resolve_against_the_config_folder_not_the_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    cfg = project / "run.yaml"
    cfg.write_text(
        "suite: suites/s.yaml\n"
        "systems:\n"
        "  - {name: a, type: replay, folder: replies}\n"
        "  - {name: b, type: replay, manifest: ../shared/replies.jsonl}\n"
        "  - {name: c, type: http, url: 'http://127.0.0.1:1/x', folder: keep-as-is}\n"
        "cache_dir: .cache\n"
        "build: {dir: built, noise_dirs: [noise, /abs/noise]}\n"
    )
    monkeypatch.chdir(tmp_path)  # somewhere else
    config = load_run_config(cfg)
    assert config.suite == str(project / "suites" / "s.yaml")
    assert config.system("a").options()["folder"] == str(project / "replies")
    assert config.system("b").options()["manifest"] == str(tmp_path / "shared" / "replies.jsonl")
    assert config.system("c").options()["folder"] == "keep-as-is"  # not a replay path
    assert config.cache_dir == str(project / ".cache")
    assert config.build == {
        "dir": str(project / "built"),
        "noise_dirs": [str(project / "noise"), "/abs/noise"],
    }
    assert config.source == str(cfg)


def test_registered_suite_names_are_not_paths(tmp_path: Path) -> None:
    cfg = tmp_path / "run.yaml"
    cfg.write_text("suite: wild-mini\nsystems: [{name: a, type: cascade}]\n")
    assert load_run_config(cfg).suite == "wild-mini"


@pytest.mark.parametrize("seed", ["true", "false", "-5", "1.5", "'3'"])
def test_seed_must_be_a_non_negative_integer(tmp_path: Path, seed: str) -> None:
    cfg = tmp_path / "run.yaml"
    cfg.write_text(f"suite: wild-mini\nsystems: [{{name: a, type: cascade}}]\nseed: {seed}\n")
    with pytest.raises(ConfigError, match=f"{cfg}: seed: "):
        load_run_config(cfg)
    cfg.write_text("suite: wild-mini\nsystems: [{name: a, type: cascade}]\nseed: 0\n")
    assert load_run_config(cfg).seed == 0


def test_read_yaml_afresh_reads_each_time_and_names_the_file_on_errors(tmp_path: Path) -> None:
    path = tmp_path / "drafts.yaml"
    path.write_text("a: 1\n", encoding="utf-8")
    assert read_yaml_afresh(path, "no such file") == {"a": 1}
    path.write_text("a: 2\n", encoding="utf-8")  # same size and maybe mtime: still read again
    assert read_yaml_afresh(path, "no such file") == {"a": 2}
    with pytest.raises(ConfigError, match=r"missing\.yaml: no such drafts file"):
        read_yaml_afresh(tmp_path / "missing.yaml", "no such drafts file")
    path.write_text("a: [1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"drafts\.yaml: not valid YAML"):
        read_yaml_afresh(path, "no such file")
