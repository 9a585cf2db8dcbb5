"""An HTTP system given both credentials in its URL and an Authorization header of its own is
rejected by ``voxeval validate``, naming the field (the client would refuse every request)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from tests.runner.executor_world import single_turn_config
from voxeval.cli.main import app


def validate(tmp_path: Path, system: dict[str, Any]) -> Any:
    config = single_turn_config(tmp_path, "http://127.0.0.1:9/v1", metrics=["duration"])
    data = yaml.safe_load(config.read_text())
    data["systems"] = [{"name": "live", "type": "http", **system}]
    config.write_text(yaml.safe_dump(data))
    return CliRunner().invoke(app, ["validate", str(config)])


@pytest.mark.parametrize(
    ("field", "headers"),
    [("headers", {"headers": {"Authorization": "Bearer abcdef123456"}}),
     ("headers_env", {"headers_env": {"authorization": "MY_TOKEN"}})],
)  # fmt: skip
def test_authorization_header_with_url_credentials_is_rejected(
    tmp_path: Path, field: str, headers: dict[str, Any]
) -> None:
    result = validate(tmp_path, {"url": "http://bob:s3cretpw@127.0.0.1:9/reply", **headers})
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert f"system 'live' (type http): {field}:" in text
    assert "together with credentials in url" in text
    assert "s3cretpw" not in result.output


def test_either_alone_is_accepted(tmp_path: Path) -> None:
    alone = validate(tmp_path, {"url": "http://bob:s3cretpw@127.0.0.1:9/reply"})
    assert alone.exit_code == 0, alone.output
    header = validate(
        tmp_path,
        {"url": "http://127.0.0.1:9/reply", "headers": {"Authorization": "Bearer abcdef123456"}},
    )
    assert header.exit_code == 0, header.output
