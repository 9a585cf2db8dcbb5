"""Logging in with an invite token (form, or a ``/login?token=`` link whose page posts the
token straight away and removes it from the address bar), and logging out."""

from __future__ import annotations

import secrets

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from voxeval.raters.accounts import close_session, open_session
from voxeval.raters.site import LOGIN_COOKIE, SESSION_COOKIE, RaterSite, csrf_ok, redirect

SESSION_MAX_AGE = 30 * 24 * 3600


def auth_routes(site: RaterSite) -> APIRouter:
    router = APIRouter()

    @router.get("/login")
    async def login_page(request: Request) -> Response:
        login_csrf = secrets.token_urlsafe(32)
        token = request.query_params.get("token", "")
        response = site.render(
            "login.html",
            login_csrf=login_csrf,
            link_token=token[:200],
            error="",
        )
        site.set_cookie(response, LOGIN_COOKIE, login_csrf, max_age=3600)
        return response

    @router.post("/login")
    async def login(request: Request) -> Response:
        client = request.client.host if request.client else "?"
        # Only failed log-ins count: a lab of raters behind one address must all get in,
        # while guessing tokens stays slow.
        if site.logins.blocked(client):
            return site.message(
                "Too many attempts",
                "Too many log-in attempts; wait a minute.",
                status=429,
                next_url="/login",
            )
        form = await request.form()
        if not csrf_ok(request.cookies.get(LOGIN_COOKIE, ""), form.get("csrf_token")):
            return site.message(
                "Form expired",
                "This log-in form is no longer valid (missing or wrong form token). "
                "Open the log-in page again.",
                status=403,
                next_url="/login",
            )
        token = form.get("token")
        session = None
        if isinstance(token, str):
            session = await run_in_threadpool(
                open_session, site.engine, site.config.study_id, token
            )
        if session is None:
            site.logins.record(client)
            login_csrf = secrets.token_urlsafe(32)
            page = site.render(
                "login.html",
                status=401,
                login_csrf=login_csrf,
                link_token="",
                error="That token is not valid for this study.",
            )
            site.set_cookie(page, LOGIN_COOKIE, login_csrf, max_age=3600)
            return page
        response = redirect("/admin" if session.role == "admin" else "/")
        site.set_cookie(response, SESSION_COOKIE, session.session_id, max_age=SESSION_MAX_AGE)
        response.delete_cookie(LOGIN_COOKIE, path="/")
        return response

    @router.post("/logout")
    async def logout(request: Request) -> Response:
        session = await site.session(request)
        form = await request.form()
        if session is None:
            return redirect("/login")
        if not csrf_ok(session.csrf_token, form.get("csrf_token")):
            return site.message("Refused", "Missing or wrong form token.", status=403)
        await run_in_threadpool(close_session, site.engine, session.session_id)
        response = redirect("/login")
        response.delete_cookie(SESSION_COOKIE, path="/")
        return response

    return router
