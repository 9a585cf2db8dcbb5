"""The rater's pages: training, the next item, answering, the arena reveal, the playback
reports of the listening gate, and the clips themselves."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse, Response
from sqlalchemy import func, select
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData, UploadFile

from voxeval.errors import AudioError
from voxeval.json_types import JSONObject
from voxeval.raters.accounts import SessionInfo, mark_trained
from voxeval.raters.answers import AnswerError, parse_answer
from voxeval.raters.assignment import next_item
from voxeval.raters.audio_files import media_type, resolve_study_file
from voxeval.raters.clip_tokens import current_clip
from voxeval.raters.clips import Clip, clip_labels, page_clips
from voxeval.raters.database import transaction
from voxeval.raters.quality_gate import required_seconds
from voxeval.raters.recording import (
    MAX_UPLOAD_BYTES,
    decode_upload,
    recording_path,
    stage_recording,
)
from voxeval.raters.schema import responses_table
from voxeval.raters.site import CSRF_HEADER, RaterSite, csrf_ok, redirect, to_login
from voxeval.raters.study.study_files import StudyItem
from voxeval.raters.submission import (
    OpenedItem,
    Refused,
    open_item,
    precheck,
    record_playback,
    submit,
)


def _form_fields(form: FormData) -> dict[str, str]:
    return {k: v for k, v in form.items() if isinstance(v, str)}


def rater_routes(site: RaterSite) -> APIRouter:
    router = APIRouter()
    config = site.config

    async def rater(request: Request) -> SessionInfo | Response:
        session = await site.session(request)
        if session is None:
            return to_login()
        if not site.requests.allow(session.rater_id):
            return site.message(
                "Slow down", "Too many requests; wait a minute.", status=429, session=session
            )
        return session

    def item_page(
        session: SessionInfo,
        opened: OpenedItem,
        *,
        error: str = "",
        reason: str = "",
        status: int = 200,
    ) -> Response:
        clips = page_clips(opened.item, opened.swapped)
        return site.render(
            "item.html",
            status=status,
            session=session,
            assignment_id=opened.assignment_id,
            item=opened.item,
            clips=clips,
            turns=_group_turns(clips),
            clip_tokens=opened.clip_tokens,
            gate=opened.gate,
            gate_message=opened.gate.explanation(clip_labels(clips)),
            required_s=required_seconds(opened.item, config.min_time_factor),
            error=error,
            reason=reason,
        )

    @router.get("/")
    async def home(request: Request) -> Response:
        session = await rater(request)
        if not isinstance(session, SessionInfo):
            return session
        if session.role == "admin":
            return redirect("/admin")
        if not session.trained:
            return redirect("/training")
        nxt = await run_in_threadpool(
            next_item, site.engine, config, session.rater_id, ttl=site.open_ttl
        )
        if nxt.assignment_id is not None:
            return redirect(f"/item/{nxt.assignment_id}")
        return site.render("finished.html", session=session, outcome=nxt.outcome)

    @router.get("/training")
    async def training(request: Request) -> Response:
        session = await rater(request)
        if not isinstance(session, SessionInfo):
            return session
        return site.render("training.html", session=session)

    @router.post("/training")
    async def training_done(request: Request) -> Response:
        session = await rater(request)
        if not isinstance(session, SessionInfo):
            return session
        form = await request.form()
        if not csrf_ok(session.csrf_token, form.get("csrf_token")):
            return site.message("Refused", "Missing or wrong form token.", status=403)
        await run_in_threadpool(mark_trained, site.engine, config.study_id, session.rater_id)
        return redirect("/")

    @router.get("/item/{assignment_id}")
    async def show_item(request: Request, assignment_id: int) -> Response:
        session = await rater(request)
        if not isinstance(session, SessionInfo):
            return session
        if not session.trained:
            return redirect("/training")
        opened = await run_in_threadpool(
            open_item, site.engine, config, session.rater_id, assignment_id
        )
        if opened.answered:
            return redirect(f"/item/{assignment_id}/reveal" if config.task == "arena" else "/")
        return item_page(session, opened)

    @router.post("/item/{assignment_id}")
    async def answer(request: Request, assignment_id: int) -> Response:
        session = await rater(request)
        if not isinstance(session, SessionInfo):
            return session
        length = request.headers.get("content-length", "")
        if length.isdigit() and int(length) > MAX_UPLOAD_BYTES + 65536:
            return site.message(
                "Too large", "The upload is too large.", status=413, session=session
            )
        form = await request.form()
        if not csrf_ok(session.csrf_token, form.get("csrf_token")):
            return site.message(
                "Refused",
                "Missing or wrong form token; reload the page.",
                status=403,
                session=session,
            )
        try:
            if config.task == "record":
                upload = form.get("recording")
                await run_in_threadpool(_store_recording, site, session, assignment_id, upload)
            else:
                fields = _form_fields(form)

                def build(item: StudyItem, swapped: bool) -> JSONObject:
                    try:
                        return parse_answer(config.task, item, fields, swapped=swapped)
                    except AnswerError as exc:
                        raise Refused(422, str(exc)) from exc

                await run_in_threadpool(
                    submit, site.engine, config, session.rater_id, assignment_id, build
                )
        except Refused as refused:
            if refused.status == 422:
                opened = await run_in_threadpool(
                    open_item, site.engine, config, session.rater_id, assignment_id
                )
                typed = form.get("reason")
                return item_page(
                    session,
                    opened,
                    error=refused.message,
                    reason=typed if isinstance(typed, str) else "",
                    status=422,
                )
            return site.message(
                "Not accepted", refused.message, status=refused.status, session=session
            )
        return redirect(f"/item/{assignment_id}/reveal" if config.task == "arena" else "/")

    @router.get("/item/{assignment_id}/reveal")
    async def reveal(request: Request, assignment_id: int) -> Response:
        session = await rater(request)
        if not isinstance(session, SessionInfo):
            return session
        opened = await run_in_threadpool(
            open_item, site.engine, config, session.rater_id, assignment_id
        )
        if not opened.answered or opened.answer is None:
            return redirect(f"/item/{assignment_id}")
        return site.render("reveal.html", session=session, item=opened.item, answer=opened.answer)

    @router.post("/api/playback")
    async def playback(request: Request) -> Response:
        session = await site.session(request)
        if session is None:
            return JSONResponse({"error": "log in first"}, status_code=401)
        if not site.requests.allow(session.rater_id):
            return JSONResponse({"error": "too many requests; wait a minute"}, status_code=429)
        if not csrf_ok(session.csrf_token, request.headers.get(CSRF_HEADER)):
            return JSONResponse({"error": "missing or wrong CSRF token"}, status_code=403)
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": "expected a JSON body"}, status_code=422)
        if not isinstance(body, dict):
            return JSONResponse({"error": "expected a JSON object"}, status_code=422)
        assignment_id, number = body.get("assignment"), body.get("clip")
        event, media_time = body.get("event"), body.get("media_time")
        if not isinstance(assignment_id, int) or not isinstance(number, int):
            return JSONResponse({"error": "fields 'assignment' and 'clip': integers"}, 422)
        if media_time is not None and not isinstance(media_time, int | float):
            return JSONResponse({"error": "field 'media_time': a number"}, 422)
        try:
            opened = await run_in_threadpool(
                open_item, site.engine, config, session.rater_id, assignment_id
            )
            clip = _clip(page_clips(opened.item, opened.swapped), number)
            gate = await run_in_threadpool(
                record_playback,
                site.engine,
                config,
                session.rater_id,
                assignment_id,
                clip.stimulus.id,
                str(event),
                float(media_time) if media_time is not None else None,
            )
        except Refused as refused:
            return JSONResponse({"error": refused.message}, status_code=refused.status)
        clips = page_clips(opened.item, opened.swapped)
        labels = clip_labels(clips)
        return JSONResponse(
            {
                "passed": gate.passed,
                "played": [c.number for c in clips if c.stimulus.id not in gate.unplayed],
                "unplayed": [labels[s] for s in gate.unplayed],
                "seconds_left": round(gate.seconds_left, 2),
                "message": gate.explanation(labels),
            }
        )

    @router.get("/clip/{token}")
    async def clip_file(request: Request, token: str) -> Response:
        session = await rater(request)
        if not isinstance(session, SessionInfo):
            return session
        stimulus = await run_in_threadpool(
            current_clip, site.engine, config.study_id, session.rater_id, token
        )
        path = None if stimulus is None else resolve_study_file(site.study_dir, stimulus.path)
        if path is None:
            return Response("Not found", status_code=404)
        return FileResponse(
            path, media_type=media_type(path), headers={"Cache-Control": "private, no-store"}
        )

    @router.get("/audio/{relative:path}")
    async def audio_file(request: Request, relative: str) -> Response:
        session = await rater(request)
        if not isinstance(session, SessionInfo):
            return session
        # Study files by path are for the admin only (recordings, checks): the path names
        # the item and stimulus, so a rater would learn a clip's side before the vote.
        # Raters fetch their current item's clips through /clip/<token>.
        path = resolve_study_file(site.study_dir, relative) if session.role == "admin" else None
        if path is None:
            return Response("Not found", status_code=404)
        return FileResponse(
            path, media_type=media_type(path), headers={"Cache-Control": "private, no-store"}
        )

    @router.get("/healthz")
    async def health() -> Response:
        def count() -> int:
            with transaction(site.engine) as conn:
                return int(
                    conn.execute(
                        select(func.count())
                        .select_from(responses_table)
                        .where(responses_table.c.study_id == config.study_id)
                    ).scalar_one()
                )

        return JSONResponse(
            {"status": "ok", "study": config.study_id, "answers": await run_in_threadpool(count)}
        )

    return router


def _clip(clips: list[Clip], number: int) -> Clip:
    for clip in clips:
        if clip.number == number:
            return clip
    raise Refused(404, "No such clip.")


def _group_turns(clips: list[Clip]) -> list[tuple[int | None, list[Clip]]]:
    groups: list[tuple[int | None, list[Clip]]] = []
    for clip in clips:
        if groups and groups[-1][0] == clip.turn:
            groups[-1][1].append(clip)
        else:
            groups.append((clip.turn, [clip]))
    return groups


def _store_recording(
    site: RaterSite, session: SessionInfo, assignment_id: int, upload: str | UploadFile | None
) -> None:
    config = site.config
    if not isinstance(upload, UploadFile):
        raise Refused(422, "field 'recording': record (or choose) an audio file first")
    item = precheck(site.engine, config, session.rater_id, assignment_id)
    data = upload.file.read(MAX_UPLOAD_BYTES + 1)
    try:
        audio = decode_upload(data)
    except AudioError as exc:
        raise Refused(422, f"The recording could not be used: {exc}") from exc
    staged, stored = stage_recording(
        site.study_dir, item.item_id, session.rater_id, audio, config.sample_rate
    )
    relative = recording_path(item.item_id, session.rater_id)

    def build(_item: StudyItem, _swapped: bool) -> JSONObject:
        # Inside the answer's transaction, after every check passed: move the take into
        # place, then the commit records it.
        if staged.exists():  # (a retried transaction calls this again)
            staged.replace(site.study_dir / relative)
        return {
            "path": relative,
            "duration_s": round(stored.duration, 3),
            "sample_rate": stored.rate,
            "uploaded_type": (upload.content_type or "")[:100],
            "uploaded_rate": audio.rate,
        }

    try:
        submit(site.engine, config, session.rater_id, assignment_id, build)
    finally:
        staged.unlink(missing_ok=True)
