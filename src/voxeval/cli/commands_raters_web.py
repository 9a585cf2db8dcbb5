"""``voxeval raters invite`` and ``voxeval raters serve``: invite tokens and the rater web
app (see docs/raters.md, "Serving the study")."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from voxeval.cli.commands_raters import raters_app
from voxeval.cli.common import friendly_errors

if TYPE_CHECKING:
    from starlette.applications import Starlette

STUDY_ARG = typer.Argument(
    ...,
    help="the study folder (study.yaml, items.jsonl, audio/) or its study.yaml, "
    "as `voxeval raters study` writes it",
)
DB_OPT = typer.Option(
    None,
    "--db",
    help="database URL: postgresql://user@host/db (psycopg) or any SQLAlchemy URL; "
    "default: a SQLite file STUDY/study.db",
)


INVITE_HELP = (
    "Create invite tokens and print them once: rater id, role and token, tab-separated.\n\n"
    "Only a SHA-256 of each token is stored, so a lost token cannot be shown again (invite "
    "a new one). Raters log in at http://HOST:PORT/login by pasting the token, or follow a "
    "link /login?token=TOKEN that you send them. Admin tokens open the /admin dashboard."
)
SERVE_HELP = (
    "Serve the rater web app for a study until interrupted; prints its URL.\n\n"
    "STUDY is the folder `voxeval raters study` writes (study.yaml, items.jsonl and the "
    "audio/ every page plays) or its study.yaml. It is copied into the database on start: "
    "new items are added, a changed task is refused.\n\n"
    "Raters log in with tokens from `voxeval raters invite`, read a short training page, "
    "then answer one item after another; admins watch progress at /admin. Every answer is "
    "committed before the next page opens, so stopping or killing the server loses nothing. "
    "Request lines are never logged (links can carry tokens)."
)


@raters_app.command("invite", help=INVITE_HELP)
@friendly_errors
def invite(
    study: Path = STUDY_ARG,
    db: str | None = DB_OPT,
    count: int = typer.Option(..., "--count", min=1, max=10000, help="how many tokens"),
    admin: bool = typer.Option(False, "--admin", help="admin tokens (the /admin dashboard)"),
    label: str | None = typer.Option(
        None, "--label", max=200, help="a note stored with the accounts (e.g. a cohort)"
    ),
) -> None:
    from voxeval.raters.accounts import create_invites
    from voxeval.raters.app import study_folder
    from voxeval.raters.database import database_url, open_database, sync_study
    from voxeval.raters.study.study_files import load_study_config, load_study_items

    study_dir = study_folder(study)
    config = load_study_config(study_dir)
    engine = open_database(database_url(study_dir, db))
    sync_study(engine, study_dir, config, load_study_items(study_dir, config))
    invites = create_invites(
        engine, config.study_id, count, role="admin" if admin else "rater", label=label
    )
    for item in invites:
        sys.stdout.write(f"{item.rater_id}\t{item.role}\t{item.token}\n")
    sys.stderr.write(
        f"{len(invites)} {'admin' if admin else 'rater'} token(s) for study "
        f"{config.study_id!r}; they are not shown again.\n"
    )


def _report_progress(app: Starlette, every_s: float) -> None:
    from voxeval.raters.progress import study_progress

    site = app.state.site
    while True:
        time.sleep(every_s)
        try:
            line = study_progress(site.engine, site.config.study_id).summary()
        except Exception as exc:  # the database may be briefly unreachable; keep serving
            line = f"progress unavailable ({type(exc).__name__})"
        sys.stderr.write(f"[{time.strftime('%H:%M:%S')}] {line}\n")
        sys.stderr.flush()


@raters_app.command("serve", help=SERVE_HELP)
@friendly_errors
def serve_study(
    study: Path = STUDY_ARG,
    db: str | None = DB_OPT,
    host: str = typer.Option("127.0.0.1", "--host", help="address to listen on"),
    port: int = typer.Option(8000, "--port", min=0, max=65535, help="port (0: any free one)"),
    secure_cookies: bool = typer.Option(
        False, "--secure-cookies", help="mark cookies Secure (when served behind HTTPS)"
    ),
    progress_every: float = typer.Option(
        60.0, "--progress-every", min=0, help="seconds between progress lines on stderr (0: off)"
    ),
) -> None:
    from voxeval.raters.app import create_app
    from voxeval.raters.progress import study_progress
    from voxeval.web import free_port, serve

    app = create_app(study, db)
    site = app.state.site
    port = port or free_port(host)
    shown_host = f"[{host}]" if ":" in host else host
    sys.stdout.write(f"http://{shown_host}:{port}/\n")
    sys.stdout.flush()
    sys.stderr.write(
        f"study {site.config.study_id!r} ({site.config.task}): "
        f"{study_progress(site.engine, site.config.study_id).summary()}\n"
    )
    sys.stderr.flush()
    if progress_every > 0:
        threading.Thread(target=_report_progress, args=(app, progress_every), daemon=True).start()
    serve(app, host, port)
