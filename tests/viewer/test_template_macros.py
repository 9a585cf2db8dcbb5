"""The macros the viewer's pages share (viewer/templates/macros.html): the pager's links and
the sortable header, rendered alone."""

from __future__ import annotations

from dataclasses import dataclass

from voxeval.viewer.app import TEMPLATES_DIR
from voxeval.web.templating import template_environment

PAGER = (
    '{% import "macros.html" as shared %}'
    "{% call(n) shared.pager(page, pages) %}?page={{ n }}&amp;x=1{% endcall %}"
)


def _pager(page: int, pages: int) -> str:
    env = template_environment(TEMPLATES_DIR)
    return env.from_string(PAGER).render(page=page, pages=pages)


def test_the_pager_links_first_previous_next_and_last_from_the_call_block() -> None:
    middle = _pager(2, 3)
    assert 'rel="first" href="?page=1&amp;x=1"' in middle
    assert 'id="prev-page" href="?page=1&amp;x=1"' in middle
    assert 'id="next-page" href="?page=3&amp;x=1"' in middle
    assert 'rel="last" href="?page=3&amp;x=1"' in middle
    assert "page 2 of 3" in middle


def test_the_pager_leaves_out_the_links_past_either_end() -> None:
    first, last = _pager(1, 2), _pager(2, 2)
    assert "prev-page" not in first and 'href="?page=2&amp;x=1"' in first
    assert "next-page" not in last and "prev-page" in last


@dataclass
class _Query:
    sort: str
    order: str


def test_the_sort_header_marks_the_sorted_column_only() -> None:
    env = template_environment(TEMPLATES_DIR)
    page = env.from_string(
        '{% import "macros.html" as shared %}'
        '{{ shared.sort_header(q, "value", "Value", "sort=value", True) }}'
        '{{ shared.sort_header(q, "system", "System", "sort=system") }}'
    ).render(q=_Query("value", "asc"))
    assert page.count('aria-sort="ascending"') == 1
    assert '<th scope="col" class="num" aria-sort="ascending">' in page
    assert 'href="?sort=value" data-sort="value"' in page
    assert 'href="?sort=system" data-sort="system">System</a>' in page
