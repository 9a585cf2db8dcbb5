"""The admin dashboard: progress per item and per rater, and (when wired) the raters'
quality statistics."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from voxeval.raters.progress import study_progress
from voxeval.raters.site import RaterSite, to_login


def admin_routes(site: RaterSite) -> APIRouter:
    router = APIRouter()

    @router.get("/admin")
    async def dashboard(request: Request) -> Response:
        session = await site.session(request)
        if session is None:
            return to_login()
        if session.role != "admin":
            return site.message(
                "Admins only", "This page needs an admin token.", status=403, session=session
            )
        progress = await run_in_threadpool(study_progress, site.engine, site.config.study_id)
        quality, quality_error = None, ""
        if site.quality_report is not None:
            try:
                quality = await run_in_threadpool(
                    site.quality_report, site.engine, site.config.study_id
                )
            except Exception as exc:  # shown, not hidden: the progress tables still help
                quality_error = f"{type(exc).__name__}: {exc}"
        return site.render(
            "admin.html",
            session=session,
            progress=progress,
            quality=quality,
            quality_error=quality_error,
            below_target=sorted(
                (i for i in progress.normal_items if i.done < i.target),
                key=lambda i: (i.done - i.target, i.item_id),
            ),
        )

    return router
