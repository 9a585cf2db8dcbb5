"""Dotted names the contributor docs tell readers to import exist where the docs say
(runs.md once pointed protocol authors at ``voxeval.report.standard_summary``, which does not
exist and would break the layering; issue 41, point 6)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = ["runs.md", "extending.md", "architecture.md"]


def dotted_names(page: str) -> list[str]:
    text = (DOCS / page).read_text()
    names = set(re.findall(r"`(voxeval(?:\.[A-Za-z_][A-Za-z0-9_]*)+)", text))
    return sorted(n for n in names if n != "voxeval.plugins")  # an entry-point group


def resolves(name: str) -> bool:
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(target, attribute):
                return False
            target = getattr(target, attribute)
        return True
    return False


@pytest.mark.parametrize("page", PAGES)
def test_every_named_voxeval_object_exists(page: str) -> None:
    missing = [name for name in dotted_names(page) if not resolves(name)]
    assert missing == []


def test_protocol_authors_are_pointed_below_the_protocol_layer() -> None:
    text = (DOCS / "runs.md").read_text()
    assert "voxeval.report.standard_summary" not in text
    assert "voxeval.analysis.aggregate.standard_summary" in text
