"""Write an imported EVA-Bench domain (:class:`EvaImport`) as a live-call suite folder:
``suite.yaml``, ``tools.yaml`` and ``scenarios/<id>.yaml`` (placeholders and their
per-language overrides kept; ``suite.yaml`` names the language to resolve)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from voxeval.benchmarks.eva.eva_release import EvaImport
from voxeval.errors import ConfigError
from voxeval.json_types import JSONReadValue


def write_release_suite(result: EvaImport, out: Path, name: str | None = None) -> Path:
    """Write the suite; return ``out/suite.yaml``. Nothing is written when no record
    converted (the caller reports the failures)."""
    if not result.scenarios:
        raise ConfigError(
            f"{result.domain}: none of the {result.records} records could be converted"
        )
    (out / "scenarios").mkdir(parents=True, exist_ok=True)
    for scenario in result.scenarios:
        data = scenario.model_dump(mode="json", exclude_none=True)
        path = out / "scenarios" / f"{_safe(scenario.id)}.yaml"
        path.write_text(_dump(data), encoding="utf-8")
    (out / "tools.yaml").write_text(_dump({"tools": result.tools}), encoding="utf-8")
    suite: dict[str, Any] = {
        "name": name or out.name,
        "protocol": "live_call",
        "description": f"EVA-Bench {result.domain} records imported as released",
        "domain_name": result.domain,
        "domain": "tools.yaml",
        "scenarios": "scenarios/",
        "language": result.language,
        # the reference's executor checks no schema; its tools convert argument types
        "tool_arguments": "coerce",
    }
    if result.python_module:
        # the tools are the release's own Python functions: code, so the suite only names the
        # module; the user trusts it explicitly (--trust / trusted_modules) when loading
        suite["python_tools_module"] = result.python_module
    suite_file = out / "suite.yaml"
    suite_file.write_text(_dump(suite), encoding="utf-8")
    return suite_file


def _dump(data: JSONReadValue) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)
