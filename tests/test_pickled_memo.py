"""The memo hands out copies and keeps only its newest entries."""

from __future__ import annotations

import pytest

from voxeval.pickled_memo import PickledMemo


def test_each_get_is_a_copy_of_what_was_put() -> None:
    memo = PickledMemo(max_entries=2)
    value = {"queries": [{"id": "q1"}]}
    memo.put("a", value)
    value["queries"].append({"id": "later"})  # the caller's value, not the kept one
    first = memo.get("a")
    first["queries"].clear()
    assert memo.get("a") == {"queries": [{"id": "q1"}]}
    memo.put("none", None)
    assert memo.get("none") is None  # a kept None is found, not missing


def test_the_oldest_entry_goes_first_when_full() -> None:
    memo = PickledMemo(max_entries=2)
    memo.put("a", 1)
    memo.put("b", 2)
    memo.put("a", 10)  # replacing a kept key evicts nothing
    assert (memo.get("a"), memo.get("b")) == (10, 2)
    memo.put("c", 3)
    with pytest.raises(KeyError):
        memo.get("a")
    assert (memo.get("b"), memo.get("c")) == (2, 3)
