"""The render log both suite builds keep: resume after an interruption, reuse unchanged items."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voxeval.benchmarks.render_log import RenderSteps, read_render_log, render_each
from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject


def test_a_line_cut_short_at_the_end_is_skipped_and_one_in_the_middle_named(
    tmp_path: Path,
) -> None:
    log = tmp_path / "manifest.jsonl"
    log.write_text('{"key": "a", "n": 1}\n\n{"key": "a", "n": 2}\n{"key": "b", "n"', "utf-8")
    assert read_render_log(log, "key") == {"a": {"key": "a", "n": 2}}
    log.write_text('{"key": "a"\n{"key": "b"}\n', "utf-8")
    with pytest.raises(ConfigError, match=r"manifest.jsonl: line 1: invalid JSON"):
        read_render_log(log, "key")
    assert read_render_log(tmp_path / "absent.jsonl", "key") == {}


def test_unchanged_items_with_their_files_are_reused_others_rendered_and_logged(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.wav").write_bytes(b"x")
    rendered: list[str] = []

    def render(item: str, out: Path, digest: str) -> JSONObject:
        rendered.append(item)
        return {"key": item, "params_hash": digest, "audio": f"{item}.wav"}

    steps: RenderSteps[str, JSONObject] = RenderSteps(
        key=lambda item: item,
        params_hash=lambda item: "h-" + item,
        files_present=lambda old: (tmp_path / str(old["audio"])).exists(),
        render=render,
    )
    existing: dict[str, JSONObject] = {
        "a": {"key": "a", "params_hash": "h-a", "audio": "a.wav"},  # reused
        "b": {"key": "b", "params_hash": "old", "audio": "b.wav"},  # hash changed
        "c": {"key": "c", "params_hash": "h-c", "audio": "c.wav"},  # file gone
    }
    log = tmp_path / "manifest.jsonl"
    done = render_each(
        ["a", "b", "c", "d"], steps, log, existing, label="t", progress=False, console=None
    )
    assert (done.cached, done.rendered) == (1, 3)
    assert rendered == ["b", "c", "d"]
    assert [e["key"] for e in done.entries] == ["a", "b", "c", "d"]
    logged = [json.loads(line)["key"] for line in log.read_text("utf-8").splitlines()]
    assert logged == ["b", "c", "d"]
