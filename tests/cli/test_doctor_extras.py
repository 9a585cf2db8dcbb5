"""`voxeval doctor` lists the optional extras for calling deployed agents and whether each is
installed (decided by whether its module can be found)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from voxeval.cli import commands_speech
from voxeval.cli.main import app


@pytest.mark.slow  # doctor checks every provider (about 30 s here)
def test_doctor_says_which_call_extras_are_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("aiortc")
    monkeypatch.setitem(commands_speech.CALL_EXTRAS, "absent", ("no_such_module_x9", "nothing"))
    rows = {r["extra"]: r["installed"] for r in commands_speech.extra_status()}
    assert rows["webrtc"] is True and rows["absent"] is False
    assert {"webrtc", "pipecat", "mcp"} <= set(rows)
    result = CliRunner().invoke(app, ["doctor"])
    assert result.exit_code == 0, result.output
    lines = [
        line for line in result.output.splitlines() if "webrtc" in line and "aiortc" not in line
    ]
    assert any("yes" in line for line in lines), result.output
    assert any("absent" in line and "no" in line for line in result.output.splitlines())
