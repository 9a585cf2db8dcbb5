"""``create_app``: the rater web app for one study folder, over SQLite or PostgreSQL."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject
from voxeval.raters.assignment import OPEN_TTL
from voxeval.raters.database import database_url, open_database, sync_study
from voxeval.raters.study.study_files import STUDY_FILE, load_study_config, load_study_items

if TYPE_CHECKING:
    from fastapi import FastAPI
    from sqlalchemy import Engine

    from voxeval.raters.site import QualityReport

ASSETS = Path(__file__).resolve().parent / "assets"
TEMPLATES = Path(__file__).resolve().parent / "templates"

# Every page: scripts, styles and media from this origin only; never framed; no referrer
# (a /login?token= link must not leak to another site).
SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "media-src 'self' blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
        "form-action 'self'; frame-ancestors 'none'"
    ),
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "permissions-policy": "microphone=(self), camera=(), geolocation=()",
    "cross-origin-opener-policy": "same-origin",
}


STATIC_TYPES = {".css": "text/css", ".js": "text/javascript", ".svg": "image/svg+xml"}


def rater_quality_rows(engine: Engine, study_id: str) -> list[JSONObject]:
    """The admin page's quality table: ``quality.rater_quality`` per rater."""
    from voxeval.raters.quality import rater_quality

    return [row.to_dict() for row in rater_quality(engine, study_id)]


def study_folder(path: Path) -> Path:
    """The study folder for a folder or its study.yaml."""
    return path.parent if path.is_file() and path.name == STUDY_FILE else path


def create_app(
    study: Path,
    db_url: str | None = None,
    *,
    open_ttl: timedelta = OPEN_TTL,
    secure_cookies: bool = False,
    quality_report: QualityReport | None = rater_quality_rows,
) -> FastAPI:
    """The ASGI app. ``db_url``: SQLAlchemy or ``postgresql://`` URL (default
    ``STUDY/study.db``); ``quality_report(engine, study_id)`` -> the rows of /admin's rater
    quality table (None: no table)."""
    try:
        from fastapi import FastAPI, Request
        from fastapi.responses import FileResponse, JSONResponse, Response
    except ImportError as exc:
        raise ConfigError(
            "the rater app needs the 'web' extra: pip install 'voxeval[web]'"
        ) from exc
    from voxeval.raters.routes_admin import admin_routes
    from voxeval.raters.routes_auth import auth_routes
    from voxeval.raters.routes_rater import rater_routes
    from voxeval.raters.site import RaterSite
    from voxeval.raters.submission import Refused
    from voxeval.web import ASSETS_DIR, FAVICON, template_environment

    study_dir = study_folder(Path(study))
    config = load_study_config(study_dir)
    items = load_study_items(study_dir, config)
    engine = open_database(database_url(study_dir, db_url))
    sync_study(engine, study_dir, config, items)
    site = RaterSite(
        study_dir=study_dir,
        config=config,
        engine=engine,
        templates=template_environment(TEMPLATES),
        open_ttl=open_ttl,
        secure_cookies=secure_cookies,
        quality_report=quality_report,
    )
    app = FastAPI(title="voxeval raters", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.site = site

    @app.middleware("http")
    async def security_headers(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        response = await call_next(request)
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        response.headers.setdefault("cache-control", "no-store")
        return response

    @app.exception_handler(Refused)
    async def refused(request: Request, exc: Refused) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": exc.message}, status_code=exc.status)
        return site.message("Not available", exc.message, status=exc.status)

    static_files = {
        "base.css": ASSETS_DIR / "base.css",
        "favicon.svg": FAVICON,
        "rater.css": ASSETS / "rater.css",
        "rater.js": ASSETS / "rater.js",
    }

    @app.get("/static/{name}")
    async def static(name: str) -> Response:
        path = static_files.get(name)
        if path is None:
            return Response("Not found", status_code=404)
        kind = STATIC_TYPES[path.suffix]
        return FileResponse(path, media_type=kind, headers={"cache-control": "no-cache"})

    @app.get("/favicon.ico")
    async def favicon() -> Response:  # browsers ask for it whatever the page links
        return FileResponse(FAVICON, media_type=STATIC_TYPES[".svg"])

    app.include_router(auth_routes(site))
    app.include_router(rater_routes(site))
    app.include_router(admin_routes(site))
    return app
