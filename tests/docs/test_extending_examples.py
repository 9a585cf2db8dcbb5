"""docs/extending.md's worked examples are real: each example's module and test are written
to their paths in a scratch folder, the module is imported (registering its component) and
the example's tests are run, against this voxeval (issue 41, point 6)."""

from __future__ import annotations

import importlib.util
import inspect
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from voxeval import registry

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "extending.md"


def examples() -> dict[str, str]:
    """Each ```python block whose first line is ``# <path>``, by path."""
    blocks = re.findall(r"```python\n# (\S+\.py)\n(.*?)```", DOC.read_text(), re.S)
    return {path: code for path, code in blocks}


@pytest.fixture
def scratch_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Register the examples in a copy of the registry, so no other test sees them."""
    registry.names("metric"), registry.names("system")  # load the built-ins first
    copy = {kind: dict(table) for kind, table in registry._REGISTRY.items()}
    monkeypatch.setattr(registry, "_REGISTRY", copy)
    yield


def load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def run_tests(module: ModuleType) -> list[str]:
    ran = []
    for name, test in inspect.getmembers(module, inspect.isfunction):
        if name.startswith("test_") and test.__module__ == module.__name__:
            test()
            ran.append(name)
    return ran


@pytest.mark.parametrize(
    ("source", "test", "expected"),
    [
        (
            "src/voxeval/scoring/says_thanks.py",
            "tests/scoring/test_says_thanks.py",
            [
                "test_no_text_channel_is_not_run_never_a_number",
                "test_says_thanks_reads_the_text_channel",
            ],
        ),
        (
            "src/voxeval/systems/echo.py",
            "tests/systems/test_echo.py",
            [
                "test_an_unknown_option_is_refused_by_name",
                "test_echo_answers_the_last_user_turn",
                "test_echo_holds_a_call_through_the_turn_adapter",
            ],
        ),
    ],
)
def test_example_is_one_module_and_one_test(
    tmp_path: Path, scratch_registry: None, source: str, test: str, expected: list[str]
) -> None:
    found = examples()
    assert {source, test} <= set(found), f"docs/extending.md lacks {source} or {test}"
    assert not (ROOT / source).exists(), f"{source} exists in the tree: rename the example"
    for path in (source, test):
        target = tmp_path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(found[path])
    stem = Path(source).stem
    try:
        load(tmp_path / source, f"voxeval_doc_example_{stem}")
        assert run_tests(load(tmp_path / test, f"voxeval_doc_example_test_{stem}")) == expected
    finally:
        sys.modules.pop(f"voxeval_doc_example_{stem}", None)
        sys.modules.pop(f"voxeval_doc_example_test_{stem}", None)
