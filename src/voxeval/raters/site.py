"""What every route of the rater app shares: the study, the database, the templates, the
limiters, and helpers for sessions, CSRF checks and rendering."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from voxeval.json_types import JSONObject
from voxeval.raters.accounts import SessionInfo, load_session
from voxeval.raters.rate_limit import SlidingWindow
from voxeval.raters.study.study_files import StudyConfig

SESSION_COOKIE = "voxeval_rater_session"
LOGIN_COOKIE = "voxeval_rater_login"
CSRF_HEADER = "x-csrf-token"
STATIC_URL = "/static"
# Not answers (those are limited per study.yaml from the database): page views, playback
# reports, clip downloads. Generous for a person, low for a script.
REQUESTS_PER_MINUTE = 600
LOGINS_PER_MINUTE = 30  # failed log-ins per client address

# The admin page's rater quality table: one dict per rater (default: quality.rater_quality).
QualityReport = Callable[[Engine, str], list[JSONObject]]


@dataclass
class RaterSite:
    study_dir: Path
    config: StudyConfig
    engine: Engine
    templates: Any
    open_ttl: timedelta
    secure_cookies: bool = False
    quality_report: QualityReport | None = None
    requests: SlidingWindow = field(default_factory=lambda: SlidingWindow(REQUESTS_PER_MINUTE))
    logins: SlidingWindow = field(default_factory=lambda: SlidingWindow(LOGINS_PER_MINUTE))

    def render(
        self,
        name: str,
        *,
        status: int = 200,
        session: SessionInfo | None = None,
        **context: Any,
    ) -> HTMLResponse:
        html = self.templates.get_template(name).render(
            static_url=STATIC_URL,
            study=self.config,
            session=session,
            csrf_token=session.csrf_token if session else "",
            **context,
        )
        return HTMLResponse(html, status_code=status)

    def message(
        self,
        heading: str,
        text: str,
        *,
        status: int,
        session: SessionInfo | None = None,
        next_url: str | None = "/",
    ) -> HTMLResponse:
        return self.render(
            "message_page.html",
            status=status,
            session=session,
            heading=heading,
            message=text,
            next_url=next_url,
        )

    async def session(self, request: Request) -> SessionInfo | None:
        return await run_in_threadpool(
            load_session, self.engine, self.config.study_id, request.cookies.get(SESSION_COOKIE)
        )

    def set_cookie(self, response: Response, name: str, value: str, max_age: int) -> None:
        response.set_cookie(
            name,
            value,
            max_age=max_age,
            httponly=True,
            samesite="strict",
            secure=self.secure_cookies,
            path="/",
        )


def csrf_ok(expected: str, supplied: str | UploadFile | None) -> bool:
    return (
        isinstance(supplied, str)
        and bool(expected)
        and secrets.compare_digest(expected.encode(), supplied.encode())
    )


def to_login() -> RedirectResponse:
    return RedirectResponse("/login", status_code=303)


def redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)
