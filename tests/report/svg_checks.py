"""Reading what a figure's SVG holds: the element ids set as matplotlib gids, and the text
labels (drawn as glyph paths, each preceded by an XML comment holding the text)."""

from __future__ import annotations

import re
from html.parser import HTMLParser


def ids_with_prefix(svg: str, prefix: str) -> list[str]:
    return re.findall(rf'id="({re.escape(prefix)}[^"]*)"', svg)


def labels(svg: str) -> set[str]:
    return set(re.findall(r"<!-- (.*?) -->", svg))


class FigureTables(HTMLParser):
    """The data tables of a report page: figure name -> rows of cells, where a cell is the
    exact ``data-value`` float when the cell has one, else its text."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[object]]] = {}
        self._name: str | None = None
        self._row: list[object] | None = None
        self._cell: list[str] | None = None
        self._value: float | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "table" and found.get("data-figure"):
            self._name = found["data-figure"]
            self.tables[self._name] = []
        elif self._name and tag == "tr":
            self._row = []
        elif self._row is not None and tag == "td":
            self._cell = []
            value = found.get("data-value")
            self._value = float(value) if value is not None else None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None and self._row is not None:
            self._row.append(self._value if self._value is not None else "".join(self._cell))
            self._cell = None
        elif tag == "tr" and self._row is not None and self._name:
            if self._row:  # header rows hold th cells only
                self.tables[self._name].append(self._row)
            self._row = None
        elif tag == "table":
            self._name = None


def figure_tables(page: str) -> dict[str, list[list[object]]]:
    parser = FigureTables()
    parser.feed(page)
    return parser.tables
