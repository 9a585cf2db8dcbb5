"""The in-memory limiter, and the log-in limit built on it: failed log-ins count per client
address, successful ones do not (a room of raters behind one address all get in)."""

from __future__ import annotations

import time
from pathlib import Path

from fastapi.testclient import TestClient

from tests.raters.rater_client import invite, start
from tests.raters.study_builder import csrf_of, make_study
from voxeval.raters.rate_limit import SlidingWindow
from voxeval.raters.site import LOGINS_PER_MINUTE


def test_sliding_window_counts_blocks_and_forgets() -> None:
    window = SlidingWindow(2, window_s=0.2)
    assert not window.blocked("x")  # asking does not count
    assert window.allow("x") and window.allow("x") and not window.allow("x")
    assert window.blocked("x") and not window.blocked("y")
    window.record("y")
    window.record("y")
    assert window.blocked("y")
    time.sleep(0.25)
    assert not window.blocked("x") and window.allow("y")


def _post_login(client: TestClient, token: str) -> int:
    page = client.get("/login")
    return client.post(
        "/login", data={"token": token, "csrf_token": csrf_of(page.text)}
    ).status_code


def test_many_good_logins_pass_and_failed_ones_are_limited(tmp_path: Path) -> None:
    app = start(make_study(tmp_path / "s", "arena", items=1, min_time_factor=0))
    tokens = invite(app, count=LOGINS_PER_MINUTE + 10)
    for token in tokens:  # more than the limit, all from 127.0.0.1-like "testclient"
        assert _post_login(TestClient(app, follow_redirects=False), token) == 303
    client = TestClient(app, follow_redirects=False)
    codes = [_post_login(client, f"wrong-{n}") for n in range(LOGINS_PER_MINUTE)]
    assert codes == [401] * LOGINS_PER_MINUTE
    assert _post_login(client, tokens[0]) == 429  # now even a good token waits
    app.state.site.engine.dispose()
