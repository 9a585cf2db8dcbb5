from pathlib import Path

import pytest

from voxeval import registry
from voxeval.errors import UnknownComponent
from voxeval.registry import items, lookup, names, register


def test_register_and_lookup_returns_the_object() -> None:
    @register("test-kind", "alpha")
    class Alpha:
        pass

    assert lookup("test-kind", "alpha") is Alpha
    assert "alpha" in names("test-kind")
    assert ("alpha", Alpha) in items("test-kind")


def test_unknown_name_lists_known_names() -> None:
    register("test-kind2", "known")(object())
    with pytest.raises(UnknownComponent, match="unknown test-kind2 'missing'; known: known"):
        lookup("test-kind2", "missing")


def test_two_different_objects_under_one_name_are_rejected() -> None:
    def first() -> None: ...

    def second() -> None: ...

    register("test-kind3", "dup")(first)
    with pytest.raises(ValueError, match="registered twice"):
        register("test-kind3", "dup")(second)


def test_every_module_of_a_builtin_package_registers_without_an_import_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "widgets_pkg"
    (package / "nested").mkdir(parents=True)
    (package / "__init__.py").write_text('"""Re-exports nothing."""\n')
    (package / "nested" / "__init__.py").write_text("")
    (package / "nested" / "gear.py").write_text(
        "from voxeval.registry import register\n\n"
        "@register('widget', 'gear')\nclass Gear:\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(registry._BUILTIN_PACKAGES, "widget", ("widgets_pkg",))
    assert registry.names("widget") == ["gear"]
    assert registry.lookup("widget", "gear").__module__ == "widgets_pkg.nested.gear"
