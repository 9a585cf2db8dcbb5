import pytest

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
