"""Everything a command prints goes through secret redaction: rich output (before line
wrapping), JSON on stdout, plain writes and the traceback of an unexpected error."""

from __future__ import annotations

import io
import logging
import sys

import typer
from typer.testing import CliRunner

from voxeval.cli.common import RedactingConsole, friendly_errors, print_json
from voxeval.errors import ConfigError
from voxeval.redaction import REDACTED, register_config_secrets

SECRET = "cli-secret-Qw8Er7Ty6Ui5Op4As3"
register_config_secrets({"api_key": SECRET})


def test_rich_output_is_redacted_before_wrapping() -> None:
    buffer = io.StringIO()
    narrow = RedactingConsole(file=buffer, width=20, force_terminal=False)
    narrow.print(f"endpoint said: bad key {SECRET} (HTTP 401)")
    text = buffer.getvalue()
    assert REDACTED in text
    assert SECRET[:12] not in text.replace("\n", "") and SECRET[-12:] not in text


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.command("json")
    @friendly_errors
    def as_json() -> None:
        print_json({"reply": f"echo {SECRET}"})
        sys.stdout.write(f"plain {SECRET}\n")
        logging.getLogger("voxeval.test").warning("log %s", SECRET)

    @app.command("known")
    @friendly_errors
    def known() -> None:
        raise ConfigError(f"judge.yaml: bad key {SECRET}")

    @app.command("bug")
    @friendly_errors
    def bug() -> None:
        raise RuntimeError(f"unexpected reply {SECRET}")

    return app


def test_commands_never_print_a_secret() -> None:
    runner = CliRunner()
    app = _app()
    ok = runner.invoke(app, ["json"])
    assert ok.exit_code == 0 and '"reply": "echo <redacted>"' in ok.stdout
    known = runner.invoke(app, ["known"])
    assert known.exit_code == 2 and f"bad key {REDACTED}" in known.output
    bug = runner.invoke(app, ["bug"])
    assert bug.exit_code == 1
    assert "RuntimeError: unexpected reply" in bug.output and "Traceback" in bug.output
    for result in (ok, known, bug):
        assert SECRET not in result.output


def test_error_messages_are_printed_verbatim_not_as_markup() -> None:
    app = typer.Typer()

    @app.command()
    @friendly_errors
    def needs_extra() -> None:
        raise ConfigError("serving needs the 'web' extra: pip install 'voxeval[web]'")

    result = CliRunner().invoke(app, [])
    assert result.exit_code == 2
    assert "pip install 'voxeval[web]'" in result.output
