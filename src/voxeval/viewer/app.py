"""The run viewer's web app (FastAPI): runs list, run summary, unit table, unit page and the
run's files (audio, the static report). Read-only: no route writes run data.

No ``from __future__ import annotations`` here: FastAPI reads the route signatures at run
time, and ``Request`` is imported inside ``create_app`` (the web extra is optional)."""

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict
from urllib.parse import urlencode

from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject, JSONReadObject, JSONReadValue
from voxeval.protocols.single_turn_summary import query_id_from_item
from voxeval.report.compare_document import fmt_mean_ci, fmt_num
from voxeval.report.unit_plural import unit_plural
from voxeval.runformat import ArtifactFormatError
from voxeval.store.layout import unit_relpath
from voxeval.viewer.run_catalog import Catalog, RunInfo, run_file_mtime
from voxeval.viewer.run_comparison import (
    CHANGE_TEXT,
    FLAG_TEXT,
    ComparisonCache,
    ItemQuery,
    ItemRow,
    Outcome,
    item_page,
)
from voxeval.viewer.run_files import media_type, resolve_run_file
from voxeval.viewer.run_index import RunIndex
from voxeval.viewer.run_summary import arena_tables, system_summaries
from voxeval.viewer.suite_texts import SuiteTexts, user_turn_audio
from voxeval.viewer.unit_artifacts import Track, UnitArtifacts, load_unit, texts_differ
from voxeval.viewer.unit_query import PER_PAGE_CHOICES, UnitQuery
from voxeval.viewer.waveform import figure_svg

PACKAGE_DIR = Path(__file__).resolve().parent
TEMPLATES_DIR = PACKAGE_DIR / "templates"
VIEWER_ASSETS_DIR = PACKAGE_DIR / "assets"
STATIC_URL = "/static"
VIEWER_STATIC_URL = "/assets"
# Pages other features add to the header (e.g. run comparison once it exists).
NAV_LINKS: list[tuple[str, str]] = [("Runs", "/"), ("Compare", "/compare")]
REASONING_KEYS = ("reasoning", "rationale", "explanation", "justification", "evidence", "raw")

if TYPE_CHECKING:  # the web extra is optional: imported for the annotation only
    from fastapi import FastAPI


class Figure(TypedDict):
    """One figure of the unit page: a track's waveform (with the call's timeline under one
    track), or the timeline alone (``track`` None) for a text-mode call."""

    id: str
    track: Track | None
    url: str
    svg: str


def create_app(runs: Sequence[Path] = (), root: Path | None = None) -> "FastAPI":
    """The viewer over ``runs`` (run folders), or over every run folder under ``root``."""
    try:
        from fastapi import FastAPI, HTTPException, Request
        from fastapi.responses import (
            FileResponse,
            HTMLResponse,
            JSONResponse,
            RedirectResponse,
            Response,
        )
        from fastapi.staticfiles import StaticFiles
    except ImportError as exc:  # the `web` extra is optional
        raise ConfigError("voxeval view needs the 'web' extra: pip install 'voxeval[web]'") from exc
    from voxeval.web import ASSETS_DIR, FAVICON, storable_id, template_environment

    templates = template_environment(TEMPLATES_DIR)
    templates.filters["tojson_pretty"] = _pretty_json
    templates.filters["num"] = _num
    templates.filters["mean_ci"] = _mean_ci
    templates.filters["plural"] = unit_plural
    templates.tests["different_text"] = texts_differ
    for name in (
        "runs.html",
        "run.html",
        "units.html",
        "unit.html",
        "message.html",
        "compare.html",
    ):
        templates.get_template(name)  # compiled now, not on the first visitor's request
    catalog = Catalog(runs, root)
    catalog.scan()
    app = FastAPI(title="voxeval view", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.catalog = catalog
    comparisons = ComparisonCache()
    suite_texts = SuiteTexts()
    app.state.comparisons = comparisons
    app.mount(VIEWER_STATIC_URL, StaticFiles(directory=VIEWER_ASSETS_DIR), name="viewer-assets")
    app.mount(STATIC_URL, StaticFiles(directory=ASSETS_DIR), name="static")

    def page(name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        html = templates.get_template(name).render(
            static_url=STATIC_URL,
            assets_url=VIEWER_STATIC_URL,
            nav_links=NAV_LINKS,
            root=str(root) if root is not None else "",
            **context,
        )
        return HTMLResponse(html, status_code=status_code)

    def run_or_404(slug: str) -> RunInfo:
        info = catalog.get(slug)
        if info is None:
            raise HTTPException(status_code=404, detail=f"no run {slug!r} here")
        return info

    @app.exception_handler(HTTPException)
    async def not_found(request: Request, exc: HTTPException) -> Response:
        return page(
            "message.html",
            status_code=exc.status_code,
            heading="Not found" if exc.status_code == 404 else "Error",
            message=str(exc.detail),
        )

    @app.get("/favicon.ico")
    def favicon() -> Response:  # browsers ask for it whatever the page links
        return FileResponse(FAVICON, media_type="image/svg+xml")

    @app.get("/", response_class=HTMLResponse)
    def runs_list() -> Response:
        infos = catalog.scan()
        rows = []
        for info in infos:
            index = catalog.index(info)
            counts = index.status_counts() if index is not None else {}
            totals = {k: sum(c[k] for c in counts.values()) for k in ("done", "failed", "pending")}
            systems = tuple(counts) or info.systems
            rows.append({"info": info, "totals": totals, "systems": systems, "indexed": index})
        return page("runs.html", runs=rows)

    @app.get("/runs/{slug}", response_class=HTMLResponse)
    def run_page(slug: str) -> Response:
        info = run_or_404(slug)
        index = catalog.index(info)
        counts = index.status_counts() if index is not None else {}
        try:
            summary, problem = catalog.summary(info.path), None
        except ArtifactFormatError as error:  # shown on the page, naming file and field
            summary, problem = None, str(error)
        return page(
            "run.html",
            info=info,
            counts=counts,
            systems=system_summaries(summary),
            arena=arena_tables(summary),
            generated_at=(summary.generated_at or "") if summary is not None else "",
            summary_problem=problem,
            indexed=index is not None,
        )

    @app.get("/runs/{slug}/units", response_class=HTMLResponse)
    def unit_table(slug: str, request: Request) -> Response:
        info = run_or_404(slug)
        index = catalog.index(info)
        if index is None:
            return page("run.html", info=info, counts={}, systems=[], arena=[],
                        generated_at="", indexed=False)  # fmt: skip
        query = UnitQuery.from_params(request.query_params)
        result = index.page(query)
        return page(
            "units.html",
            info=info,
            facets=index.facets(),
            result=result,
            query=result.query,
            per_page_choices=PER_PAGE_CHOICES,
        )

    @app.get("/runs/{slug}/units/{seq}", response_class=HTMLResponse)
    def unit_page(slug: str, seq: int, request: Request) -> Response:
        info = run_or_404(slug)
        index = catalog.index(info)
        # an id beyond the index's integers would overflow SQLite: no such unit either
        row = index.unit(seq) if index is not None and storable_id(seq) else None
        if index is None or row is None:
            raise HTTPException(status_code=404, detail=f"run {slug!r} has no unit #{seq}")
        relative = unit_relpath(row.item_id, row.system, row.trial, row.condition)
        artifacts = load_unit(info.path, relative)
        scores = index.unit_scores(row.unit_key)
        for score in scores:
            score["reasoning"] = judge_reasoning(score["details"])
        previous, following = index.neighbours(seq)
        item_meta = _item_meta(index, row.item_id)
        query, query_error = None, None
        if info.protocol == "single_turn":
            reply = artifacts.reply or {}
            query_id = reply.get("query_id") or query_id_from_item(row.item_id, row.condition)
            query, query_error = suite_texts.query(info.path, str(query_id))
        user_audio = {
            int(turn["index"]): f"/runs/{slug}/units/{seq}/user-turns/{turn['index']}"
            for turn in ((artifacts.dialogue or {}).get("turns") or [])
            if isinstance(turn, dict)
            and isinstance(turn.get("index"), int)
            and user_turn_audio(artifacts.dialogue, turn["index"]) is not None
        }
        return page(
            "unit.html",
            query=query,
            query_error=query_error,
            user_audio=user_audio,
            info=info,
            row=row,
            art=artifacts,
            scores=scores,
            figures=_figures(info, artifacts),
            item_meta=item_meta,
            previous=previous,
            following=following,
            back=request.query_params.get("back", ""),
        )

    @app.get("/runs/{slug}/units/{seq}/user-turns/{turn}")
    def user_turn_file(slug: str, seq: int, turn: int) -> Response:
        """A dialogue's user turn as the system heard it (from the suite, outside the run)."""
        info = run_or_404(slug)
        index = catalog.index(info)
        row = index.unit(seq) if index is not None and storable_id(seq) else None
        if row is None:
            raise HTTPException(status_code=404, detail=f"run {slug!r} has no unit #{seq}")
        relative = unit_relpath(row.item_id, row.system, row.trial, row.condition)
        path = user_turn_audio(load_unit(info.path, relative).dialogue, turn)
        if path is None:
            raise HTTPException(status_code=404, detail=f"no recording of user turn {turn}")
        return FileResponse(path, media_type=media_type(path))

    def compared_runs(request: Request) -> tuple[list[RunInfo], Outcome | None]:
        slugs = list(dict.fromkeys(request.query_params.getlist("run")))
        infos = [run_or_404(slug) for slug in slugs]
        if len(infos) < 2:
            return infos, None
        return infos, comparisons.get([info.path for info in infos])

    @app.get("/compare", response_class=HTMLResponse)
    def compare_page(request: Request) -> Response:
        if request.query_params.get("baseline") == "oldest":
            # from the runs list (newest first): the oldest ticked run becomes the baseline,
            # and the address names the runs in that order
            slugs = list(dict.fromkeys(request.query_params.getlist("run")))
            # start times have whole seconds: two runs started in the same second are ordered
            # by their run file's last write (a run that finished later is the later run)
            infos = sorted(
                (run_or_404(s) for s in slugs),
                key=lambda i: (i.created, run_file_mtime(i.path), i.slug),
            )
            target = "/compare?" + urlencode([("run", i.slug) for i in infos])
            return RedirectResponse(target, status_code=303)
        infos, outcome = compared_runs(request)
        if outcome is None or outcome.data is None:
            # nothing picked yet (200), or a refused comparison: its reason, never a 500
            status = 200 if not infos else 400
            error = outcome.error if outcome is not None else None
            if outcome is None and infos:
                error = "pick at least two runs to compare"
            return page("compare.html", status_code=status, infos=infos, data=None,
                        error=error, runs=catalog.scan())  # fmt: skip
        data = outcome.data
        slugs = [info.slug for info in infos]
        slug_of = {r["run_id"]: info.slug for r, info in zip(data["runs"], infos, strict=True)}
        rows = outcome.rows
        query = ItemQuery.from_params(request.query_params)
        items = item_page(rows, query)
        _link_units(items.rows, slug_of, {info.slug: info for info in infos})
        return page(
            "compare.html",
            infos=infos,
            data=data,
            error=None,
            slugs=slugs,
            slug_of=slug_of,
            items=items,
            query=items.query,
            item_systems=sorted({r["system"] for r in rows}),
            item_metrics=sorted({r["metric"] for r in rows}),
            item_runs=list(dict.fromkeys(r["run"] for r in rows)),
            flag_text=FLAG_TEXT,
            change_text=CHANGE_TEXT,
            json_url="/compare.json?" + urlencode([("run", s) for s in slugs]),
            as_baseline={
                s: "/compare?" + urlencode([("run", x) for x in [s, *(o for o in slugs if o != s)]])
                for s in slugs[1:]
            },
        )

    def _link_units(
        rows: list[ItemRow], slug_of: dict[str, str], info_of: dict[str, RunInfo]
    ) -> None:
        """Give each shown item delta the URLs of its baseline and later unit pages."""
        wanted: dict[tuple[str, str], set[str]] = {}
        for row in rows:
            for run_id in (row["baseline_run"], row["run"]):
                wanted.setdefault((run_id, row["system"]), set()).add(row["item"])
        seqs: dict[tuple[str, str], dict[tuple[str, str], int]] = {}
        for (run_id, system), item_ids in wanted.items():
            slug = slug_of[run_id]
            index = catalog.index(info_of[slug])
            found = index.first_units(system, sorted(item_ids)) if index is not None else {}
            seqs[(run_id, system)] = found

        def unit_url(run_id: str, system: str, cell: tuple[str, str]) -> str:
            seq = seqs[(run_id, system)].get(cell)
            return f"/runs/{slug_of[run_id]}/units/{seq}" if seq is not None else ""

        for row in rows:
            cell = (row["item"], row["condition"])
            row["baseline_url"] = unit_url(row["baseline_run"], row["system"], cell)
            row["run_url"] = unit_url(row["run"], row["system"], cell)

    @app.get("/compare.json")
    def compare_json(request: Request) -> Response:
        _, outcome = compared_runs(request)
        if outcome is None:
            return JSONResponse({"error": "pick at least two runs to compare"}, status_code=400)
        if outcome.data is None:
            return JSONResponse({"error": outcome.error}, status_code=400)
        return JSONResponse(outcome.data)

    @app.get("/runs/{slug}/report")
    def report(slug: str) -> Response:
        info = run_or_404(slug)
        if not info.has_report:
            raise HTTPException(
                status_code=404,
                detail=f"run {slug!r} has no static report yet: voxeval report {info.path}",
            )
        return RedirectResponse(f"/runs/{slug}/files/report/index.html", status_code=307)

    @app.get("/runs/{slug}/files/{relative:path}")
    def run_file(slug: str, relative: str) -> Response:
        info = run_or_404(slug)
        path = resolve_run_file(info.path, relative)
        if path is None:
            raise HTTPException(status_code=404, detail="no such file in this run")
        return FileResponse(path, media_type=media_type(path))

    return app


def _figures(info: RunInfo, art: UnitArtifacts) -> list[Figure]:
    """One figure per track; a call's figure carries its timeline under the mixed track
    (or under the first track, or alone for a text-mode call)."""
    figures: list[Figure] = []
    timeline_track = None
    if art.timeline is not None:
        names = [t.name for t in art.tracks]
        timeline_track = next((n for n in ("mixed.wav", *names) if n in names), None)
    for n, track in enumerate(art.tracks):
        with_timeline = track.name == timeline_track
        try:
            svg = figure_svg(
                title=f"{track.label}: waveform" + (" and event timeline" if with_timeline else ""),
                audio=art.folder / track.name,
                timeline=art.timeline if with_timeline else None,
                overlaps=art.overlaps if with_timeline else None,
                track_id=f"track-{n}",
            )
        except Exception as exc:  # a damaged file must not take the whole page down
            svg = ""
            art.unreadable[track.name] = f"{type(exc).__name__}: {exc}"
        figures.append(
            {
                "id": f"track-{n}",
                "track": track,
                "url": f"/runs/{info.slug}/files/{art.relative}/{track.name}",
                "svg": svg,
            }
        )
    if art.timeline is not None and timeline_track is None:
        try:
            svg = figure_svg(
                title="event timeline (text-mode call: no audio)",
                audio=None,
                timeline=art.timeline,
                overlaps=art.overlaps,
            )
        except Exception as exc:  # e.g. a hand-edited events.jsonl with a text time
            art.timeline_error = f"events.jsonl: {type(exc).__name__}: {exc}"
        else:
            figures.append({"id": "", "track": None, "url": "", "svg": svg})
    return figures


def _item_meta(index: RunIndex, item_id: str) -> JSONObject:
    from sqlalchemy import select

    from voxeval.store.index import items_table

    t = items_table
    with index.engine.connect() as conn:
        meta = conn.execute(
            select(t.c.meta).where((t.c.run_id == index.run_id) & (t.c.item_id == item_id))
        ).scalar()
    return dict(meta or {}) if isinstance(meta, dict) else {}


def judge_reasoning(details: JSONReadValue, path: str = "") -> list[tuple[str, str]]:
    """The judge's own words found in a score's details (reasoning, evidence, raw answers),
    labelled by where they sit, so the page can show them before the full details."""
    found: list[tuple[str, str]] = []
    if isinstance(details, dict):
        for key, value in details.items():
            where = f"{path}.{key}" if path else str(key)
            if key in REASONING_KEYS and isinstance(value, str) and value.strip():
                found.append((where, value))
            elif key in REASONING_KEYS and isinstance(value, list):
                found += [(f"{where}[{i}]", v) for i, v in enumerate(value) if isinstance(v, str)]
            else:
                found += judge_reasoning(value, where)
    elif isinstance(details, list):
        for i, value in enumerate(details):
            found += judge_reasoning(value, f"{path}[{i}]")
    return found[:50]


def _pretty_json(value: JSONReadValue) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


def _mean_ci(stat: JSONReadObject | None) -> str:
    """``mean [low, high]``; a mean without an interval stands alone (the cell's title and
    comparison.json say why), so wide tables stay readable."""
    if stat and (stat.get("ci_low") is None or stat.get("ci_high") is None):
        return fmt_num(stat.get("mean"))
    return fmt_mean_ci(stat)


def _num(value: JSONReadValue, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return f"{value:.{digits}g}"
    return str(value)
