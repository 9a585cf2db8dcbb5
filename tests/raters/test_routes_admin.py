"""The admin dashboard's quality control: rater_quality() per rater (gold accuracy,
agreement, the outlier test's p-values and flag) and the items still below target."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

from tests.raters.rater_client import invite, logged_in, next_assignment, play_all, start
from tests.raters.study_builder import csrf_of, make_study
from voxeval.raters.quality import rater_quality


def _row(html: str, table: str, rater_id: str) -> list[str]:
    body = html.split(f'id="{table}"', 1)[1].split("</table>", 1)[0]
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, flags=re.S):
        cells = [
            unescape(re.sub(r"<[^>]+>", "", c)).strip()
            for c in re.findall(r"<td>(.*?)</td>", row, flags=re.S)
        ]
        if cells and cells[0] == rater_id:
            return cells
    raise AssertionError(f"no row for {rater_id} in {table}")


def test_dashboard_flags_the_rater_who_disagrees_and_lists_items_below_target(
    tmp_path: Path,
) -> None:
    # 10 items x 4 raters, 6 answers each: three raters say "tie" everywhere (no side, so
    # the per-rater A/B swap does not matter); the fourth says "both bad" on every item, so
    # it never agrees with the others.
    app = start(make_study(tmp_path / "s", "arena", items=10, gold=0, raters_per_item=4,
                           min_time_factor=0, rate_limit_per_minute=1000))  # fmt: skip
    tokens = invite(app, count=4)
    raters = [logged_in(app, token) for token in tokens]
    choices = ["tie", "tie", "tie", "both_bad"]
    for client, choice in zip(raters, choices, strict=True):
        for _ in range(6):
            assignment, html = next_assignment(client)
            play_all(client, assignment, html)
            form = {"csrf_token": csrf_of(html), "choice": choice}
            assert client.post(f"/item/{assignment}", data=form).status_code == 303

    site = app.state.site
    quality = {q.rater_id: q for q in rater_quality(site.engine, site.config.study_id)}
    odd = [r for r, q in quality.items() if q.flagged]
    assert len(odd) == 1 and quality[odd[0]].agreement == 0.0
    odd_quality = quality[odd[0]]
    assert odd_quality.p_holm is not None and odd_quality.p_holm < 0.05

    admin = logged_in(app, invite(app, role="admin")[0], train=False)
    page = admin.get("/admin").text
    cells = _row(page, "quality-table", odd[0])
    # rater, answers, gold, agreement, kappa, pool agreement, p (Holm), flag
    assert cells[1] == "6"
    assert cells[3] == f"0% (0/{odd_quality.compared})"
    assert cells[6].startswith(f"{odd_quality.p_holm:.3g}")
    assert cells[7] == "flagged: agreement_outlier"
    good = next(r for r in quality if r != odd[0])
    assert _row(page, "quality-table", good)[7] == "—"

    # 24 answers over 10 items x 4 raters: every item is still below target
    below = page.split('id="below-target"', 1)[1].split("</p>", 1)[0]
    shown = re.findall(r"(item-\d+) (\d)/4", below)
    assert len(shown) == 10 and sum(int(done) for _, done in shown) == 24
    assert [int(done) for _, done in shown] == sorted(int(done) for _, done in shown)
    assert "Items below target (10)" in page
    site.engine.dispose()
