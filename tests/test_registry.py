import inspect
from pathlib import Path
from typing import Any

import pytest

from voxeval import registry
from voxeval.benchmarks.suite_info import SUITES
from voxeval.errors import UnknownComponent
from voxeval.protocols.contract import PROTOCOLS
from voxeval.providers.base import ASR, LLM, MOS, TTS, VAD, AudioLLM
from voxeval.providers.provider_kinds import (
    ASR_PROVIDERS,
    AUDIO_LLM_PROVIDERS,
    LLM_PROVIDERS,
    MOS_PROVIDERS,
    TTS_PROVIDERS,
    VAD_PROVIDERS,
)
from voxeval.registry import Kind, items, lookup, names, register
from voxeval.scoring.metric import METRICS
from voxeval.simulation.parties import CALLERS
from voxeval.simulation.perturbations import PERTURBATIONS


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


def test_kind_lookup_returns_the_registered_object() -> None:
    shapes: Kind[type[object]] = Kind("test-kind-typed")

    @shapes.register("square")
    class Square:
        pass

    assert shapes.lookup("square") is Square
    # one table: the untyped functions (plugins, kinds given as data) see the same component
    assert lookup("test-kind-typed", "square") is Square
    register("test-kind-typed", "circle")(int)
    assert shapes.lookup("circle") is int


def test_kind_unknown_name_lists_the_known_names() -> None:
    colours: Kind[str] = Kind("test-kind-colours")
    colours.register("red")("#f00")
    colours.register("blue")("#00f")
    with pytest.raises(
        UnknownComponent, match=r"unknown test-kind-colours 'green'; known: blue, red"
    ):
        colours.lookup("green")


def test_kind_names_and_items_are_sorted() -> None:
    numbers: Kind[int] = Kind("test-kind-numbers")
    for name, value in [("c", 3), ("a", 1), ("b", 2)]:
        numbers.register(name)(value)
    assert numbers.names() == ["a", "b", "c"]
    assert numbers.items() == [("a", 1), ("b", 2), ("c", 3)]


def test_kind_rejects_two_classes_under_one_name() -> None:
    shapes: Kind[type[object]] = Kind("test-kind-dup")

    @shapes.register("shape")
    class Square:
        pass

    with pytest.raises(ValueError, match="registered twice"):

        @shapes.register("shape")
        class Circle:
            pass


def test_load_all_imports_every_builtin_package_up_front(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "gadgets_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "cog.py").write_text(
        "from voxeval.registry import register\n\n"
        "@register('gadget', 'cog')\nclass Cog:\n    pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(registry._BUILTIN_PACKAGES, "gadget", ("gadgets_pkg",))
    registry.load_all()  # no lookup of 'gadget' yet: imported all the same
    assert "cog" in registry._REGISTRY["gadget"]
    assert "gadgets_pkg" in registry._loaded_packages


def test_builtin_kinds_load_their_package_on_first_lookup() -> None:
    assert {"live_call", "single_turn"} <= set(PROTOCOLS.names())
    assert {"clinic-calls", "wild-mini"} <= set(SUITES.names())
    assert SUITES.lookup("wild-mini").protocol == "single_turn"
    assert {"llm", "scripted"} <= set(CALLERS.names())
    assert {"accent", "connection", "noise", "persona"} <= set(PERTURBATIONS.names())
    assert {"task_completion", "wer", "checklist"} <= set(METRICS.names())


def _protocol_methods(protocol: type) -> set[str]:
    return {
        name
        for name, value in vars(protocol).items()
        if callable(value) and not name.startswith("_")
    }


@pytest.mark.parametrize(
    ("kind", "protocol"),
    [
        (ASR_PROVIDERS, ASR),
        (TTS_PROVIDERS, TTS),
        (LLM_PROVIDERS, LLM),
        (AUDIO_LLM_PROVIDERS, AudioLLM),
        (MOS_PROVIDERS, MOS),
        (VAD_PROVIDERS, VAD),
    ],
)
def test_builtin_providers_have_the_methods_of_their_kind(kind: Kind[Any], protocol: type) -> None:
    # The type of a kind is a promise mypy relies on; check the built-ins keep it.
    methods = _protocol_methods(protocol) | {"identity"}
    builtin = [(n, c) for n, c in kind.items() if c.__module__.startswith("voxeval.")]
    assert builtin
    for name, cls in builtin:
        missing = sorted(m for m in methods if not callable(getattr(cls, m, None)))
        assert missing == [], f"{kind.kind} {name!r} lacks {missing}"


def test_builtin_metrics_take_a_record_and_resources() -> None:
    for name, metric in METRICS.items():
        if not metric.__module__.startswith("voxeval."):
            continue
        # the signature callers see, not the one of a function a decorator wrapped
        params = list(inspect.signature(metric, follow_wrapped=False).parameters.values())
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        required = [p for p in params if p.default is p.empty]
        assert len(positional) >= 2 and len(required) <= 2, name


def test_two_different_values_under_one_name_are_rejected() -> None:
    register("test-kind-values", "v")({"a": 1})
    register("test-kind-values", "v")({"a": 1})  # an equal value: a harmless re-import
    with pytest.raises(ValueError, match="registered twice"):
        register("test-kind-values", "v")({"a": 2})
