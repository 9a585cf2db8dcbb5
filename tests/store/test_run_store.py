from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from voxeval.config import RunConfig
from voxeval.errors import ConfigError
from voxeval.protocols.contract import WorkUnit
from voxeval.scoring.score import Score
from voxeval.store import REDACTED, RunStore, safe_name


def unit(
    item: str = "q1", system: str = "sys", trial: int = 0, condition: str = "clean"
) -> WorkUnit:
    return WorkUnit(item, system, trial, condition, category="cat")


def test_layout_is_created(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    for name in ("run.yaml", "index.sqlite", "items", "report"):
        assert (tmp_path / "run" / name).exists()
    assert store.items_dir == tmp_path.resolve() / "run" / "items"
    assert yaml.safe_load((tmp_path / "run" / "run.yaml").read_text())["run_id"].startswith("run-")


def test_unit_dir_layout_and_sanitising(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    assert store.folder.unit_dir(unit("q1")) == store.items_dir / "q1" / "sys" / "0"
    noisy = store.folder.unit_dir(unit("q1", condition="human_noise", trial=2))
    assert noisy == store.items_dir / "q1@human_noise" / "sys" / "2"
    odd = store.folder.unit_dir(unit("a/../b c", system="gpt-4o:audio"))
    assert odd.is_dir() and store.items_dir in odd.parents
    assert ".." not in odd.relative_to(store.items_dir).parts
    # distinct ids never share a folder, even when they sanitise to the same text
    assert safe_name("a/b") != safe_name("a_b") == "a_b"


def test_unit_dirs_share_their_upper_levels_and_a_file_in_the_way_is_named(
    tmp_path: Path,
) -> None:
    store = RunStore(tmp_path)
    first = store.folder.unit_dir(unit("q1", system="a"))
    second = store.folder.unit_dir(unit("q1", system="b", trial=1))  # q1/ exists already
    assert first.is_dir() and second.is_dir() and first.parent.parent == second.parent.parent
    (store.items_dir / "q2").write_text("not a folder")
    with pytest.raises(FileExistsError, match="q2"):
        store.folder.unit_dir(unit("q2"))


def test_unit_dirs_are_made_again_after_a_reset(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    assert store.folder.unit_dir(unit("q1", system="a")).is_dir()
    store.reset()  # removes items/ with q1/
    assert not (store.items_dir / "q1").exists()
    for system in ("a", "b"):  # the memo of existing folders went with them
        assert store.folder.unit_dir(unit("q1", system=system)).is_dir()


def test_status_lifecycle(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    a, b = unit("a"), unit("b")
    store.units.record_items([a, b], meta={"a": {"text": "hello"}})
    assert not store.units.is_finished(a)
    store.recorder.start(a)
    assert [u.status for u in store.units.records()] == ["running", "planned"]
    store.units.finish(a)
    store.recorder.start(b)
    store.units.finish(b, "failed", "boom")
    assert store.units.is_finished(a) and not store.units.is_finished(b)
    assert store.units.finished_keys() == {a.key}
    counts = store.units.status_counts()["sys"]
    assert (counts["done"], counts["failed"], counts["pending"]) == (1, 1, 0)
    assert counts["failed_by_cause"] == {"unknown": 1}  # finish() without a cause
    assert store.units.records("failed")[0].error == "boom"
    assert store.units.item_meta()["a"] == {"text": "hello"}
    store.recorder.start(b)  # a retry counts attempts and clears the error
    record = store.units.records("running")[0]
    assert (record.attempts, record.error) == (2, None)
    with pytest.raises(ValueError):
        store.units.finish(a, "weird")


def test_state_survives_reopening(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    a = unit("a")
    store.recorder.start(a)
    store.scores.save(a, {"m": Score(1.0)})
    store.units.finish(a)
    run_id = store.run_id
    store.close()
    again = RunStore(tmp_path)
    assert again.run_id == run_id
    assert again.units.is_finished(a)
    assert [r.value for r in again.scores.load()] == [1.0]


def test_scores_merge_in_json_and_index(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    a = unit("a")
    store.recorder.start(a)
    store.scores.save(a, {"x": Score(2.0, passed=True, details={"k": [1, 2]})})
    store.scores.save(a, {"y": Score.not_run("no judge"), "x": Score(3.0)})
    store.units.finish(a)
    data = json.loads((store.folder.unit_dir(a) / "scores.json").read_text())
    assert data["x"]["value"] == 3.0 and data["y"]["error"] == "no judge"
    rows = {r.metric: r for r in store.scores.load()}
    assert rows["x"].value == 3.0 and rows["x"].passed is None
    assert rows["y"].value is None and rows["y"].error == "no judge" and not rows["y"].ran
    assert (rows["x"].item_id, rows["x"].system, rows["x"].category) == ("a", "sys", "cat")
    assert store.scores.load(system="other") == []


def test_scores_of_unfinished_units_are_not_loaded(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    a = unit("a")
    store.recorder.start(a)
    store.scores.save(a, {"x": Score(1.0)})
    assert store.scores.load() == []
    assert len(store.scores.load(only_done=False)) == 1


def test_usage_summary(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.recorder.record_usage(unit("a"), "judge", 3, 100, 10, 0.01, parse_failures=1)
    store.recorder.record_usage(unit("b", system="s2"), "judge", 1, 50, 5, None)
    summary = store.usage.summary()
    assert summary["total"]["calls"] == 4
    assert summary["total"]["prompt_tokens"] == 150
    assert summary["total"]["cost_usd"] == pytest.approx(0.01)
    assert summary["total"]["calls_without_cost"] == 1
    assert summary["total"]["parse_failure_rate"] == pytest.approx(0.25)
    assert summary["by_system"]["s2"]["cost_usd"] is None


def test_provenance_and_model_identities(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    config = RunConfig(suite="x", systems=[{"name": "s", "type": "cascade"}], seed=7)
    store.run_yaml.write_provenance(config, extra={"note": "hi"})
    store.recorder.add_model_identity("asr", {"provider": "whisper", "model": "tiny.en"})
    store.recorder.add_model_identity("asr", {"provider": "whisper", "model": "tiny.en"})
    doc = yaml.safe_load((tmp_path / "run.yaml").read_text())
    assert doc["seed"] == 7 and doc["config"]["systems"][0]["type"] == "cascade"
    assert doc["environment"]["python"].startswith("3.")
    assert "numpy" in doc["environment"]["packages"]
    assert doc["models"]["asr"] == [{"provider": "whisper", "model": "tiny.en"}]
    assert doc["extra"]["note"] == "hi" and "started_at" in doc
    store.run_yaml.write_provenance(config)  # a resume keeps the first start and logs the resume
    doc2 = yaml.safe_load((tmp_path / "run.yaml").read_text())
    assert doc2["started_at"] == doc["started_at"] and len(doc2["resumed_at"]) == 1


def test_secrets_never_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VOXEVAL_TEST_API_KEY", "sk-envsecret-123456")
    store = RunStore(tmp_path / "run")
    config = RunConfig(
        suite="x",
        systems=[{"name": "s", "type": "openai-audio", "api_key": "sk-inline-999999"}],
        judge={"provider": "openai", "api_key_env": "VOXEVAL_TEST_API_KEY", "max_tokens": 5},
    )
    store.run_yaml.write_provenance(config)
    store.recorder.add_model_identity(
        "llm", {"model": "m", "headers": {"Authorization": "Bearer abcdefg"}}
    )
    a = unit("a")
    store.recorder.start(a)
    store.units.finish(a, "failed", "HTTP 401 for key sk-envsecret-123456")
    store.scores.save(a, {"m": Score.not_run("bad key sk-envsecret-123456")})
    store.close()
    doc = yaml.safe_load((tmp_path / "run" / "run.yaml").read_text())
    assert doc["config"]["systems"][0]["api_key"] == REDACTED
    assert doc["config"]["judge"]["api_key_env"] == "VOXEVAL_TEST_API_KEY"  # a name, kept
    assert doc["config"]["judge"]["max_tokens"] == 5
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file():
            blob = path.read_bytes()
            for secret in (b"sk-envsecret-123456", b"sk-inline-999999", b"abcdefg"):
                assert secret not in blob, (path, secret)


def test_index_url_from_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared.sqlite"
    monkeypatch.setenv("VOXEVAL_INDEX_URL", f"sqlite:///{shared}")
    one, two = RunStore(tmp_path / "one"), RunStore(tmp_path / "two")
    for store in (one, two):
        store.recorder.start(unit("a"))
        store.units.finish(unit("a"))
    assert shared.exists() and not (tmp_path / "one" / "index.sqlite").exists()
    assert one.run_id != two.run_id
    counts = one.units.status_counts()["sys"]
    assert (counts["done"], counts["failed"], counts["pending"]) == (1, 0, 0)
    assert "index_url" in yaml.safe_load((tmp_path / "one" / "run.yaml").read_text())
    monkeypatch.delenv("VOXEVAL_INDEX_URL")
    with pytest.raises(ConfigError, match="VOXEVAL_INDEX_URL"):
        RunStore(tmp_path / "one")  # would silently open an empty local index otherwise


def test_reset_forgets_everything(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    a = unit("a")
    store.recorder.start(a)
    (store.folder.unit_dir(a) / "reply.json").write_text("{}")
    store.units.finish(a)
    store.reset()
    assert store.units.records() == [] and list(store.items_dir.iterdir()) == []


def test_complete_stores_scores_and_marks_done_in_one_step(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    unit = WorkUnit("q1", "sys", 0, "clean", "II")
    store.units.record_items([unit])
    store.recorder.start(unit)
    assert not store.units.is_finished(unit)
    store.units.complete(unit, {"m": Score(0.5, passed=True)})
    assert store.units.is_finished(unit)
    [row] = store.scores.load()
    assert (row.metric, row.value, row.passed) == ("m", 0.5, True)
