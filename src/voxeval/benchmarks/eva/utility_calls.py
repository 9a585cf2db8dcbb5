"""The built-in ``utility-calls`` live-call suite (an original domain shipped as package data)."""

from __future__ import annotations

from pathlib import Path

from voxeval.benchmarks.suite_info import SUITES, SuiteInfo

UTILITY_CALLS_PATH = Path(__file__).parents[1] / "data" / "utility" / "suite.yaml"

UTILITY_CALLS = SUITES.register("utility-calls")(
    SuiteInfo(
        name="utility-calls",
        protocol="live_call",
        description=(
            "27 original phone-line scenarios for a home internet and electricity provider "
            "(single-intent, multi-intent, adversarial; English and Spanish callers) with "
            "declarative tools and entity-heavy verification"
        ),
        path=UTILITY_CALLS_PATH,
    )
)
