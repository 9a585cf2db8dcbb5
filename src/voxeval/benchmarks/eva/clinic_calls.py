"""The built-in ``clinic-calls`` live-call suite (an original domain shipped as package data)."""

from __future__ import annotations

from pathlib import Path

from voxeval.benchmarks.suite_info import SUITES, SuiteInfo

CLINIC_CALLS_PATH = Path(__file__).parents[1] / "data" / "clinic" / "suite.yaml"

CLINIC_CALLS = SUITES.register("clinic-calls")(
    SuiteInfo(
        name="clinic-calls",
        protocol="live_call",
        description=(
            "21 original phone-line scenarios for a community health clinic (single-intent, "
            "multi-intent, adversarial) with declarative tools and entity-heavy verification"
        ),
        path=CLINIC_CALLS_PATH,
    )
)
