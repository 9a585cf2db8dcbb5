"""The shared test components work here: a real browser renders the shared base page served
over loopback, and a throwaway PostgreSQL cluster accepts a table."""

from __future__ import annotations

from typing import Any

import httpx
import sqlalchemy as sa

from tests.support.live_server import LiveServer
from voxeval.web import ASSETS_DIR, template_environment


def _app() -> Any:
    from fastapi import FastAPI
    from fastapi.responses import HTMLResponse
    from fastapi.staticfiles import StaticFiles

    app = FastAPI()
    app.mount("/static", StaticFiles(directory=ASSETS_DIR), name="static")
    env = template_environment()

    @app.get("/", response_class=HTMLResponse)
    def home() -> str:
        return env.get_template("message.html").render(
            static_url="/static", heading="Hello <raters>", message="ready"
        )

    return app


def test_base_page_escapes_and_serves_its_stylesheet() -> None:
    with LiveServer(_app()) as server:
        page_html = httpx.get(server.url + "/").text
        css = httpx.get(server.url + "/static/base.css")
    assert "Hello &lt;raters&gt;" in page_html
    assert css.status_code == 200 and "--accent" in css.text


def test_browser_renders_the_base_page(page: Any) -> None:
    with LiveServer(_app()) as server:
        page.goto(server.url + "/")
        assert page.inner_text("h1") == "Hello <raters>"
        # the stylesheet loaded: the header has the panel background
        colour = page.eval_on_selector(".site-header", "e => getComputedStyle(e).backgroundColor")
        assert colour == "rgb(246, 248, 250)"


def test_throwaway_postgres_keeps_rows(postgres_url: str) -> None:
    engine = sa.create_engine(postgres_url)
    with engine.begin() as conn:
        conn.execute(sa.text("create table t (x int)"))
        conn.execute(sa.text("insert into t values (1), (2)"))
    with engine.connect() as conn:
        assert conn.execute(sa.text("select sum(x) from t")).scalar() == 3
    engine.dispose()
