"""The built-in ``helpdesk-calls`` live-call suite (an original domain shipped as package data)."""

from __future__ import annotations

from pathlib import Path

from voxeval.benchmarks.suite_info import SUITES, SuiteInfo

HELPDESK_CALLS_PATH = Path(__file__).parents[1] / "data" / "helpdesk" / "suite.yaml"

HELPDESK_CALLS = SUITES.register("helpdesk-calls")(
    SuiteInfo(
        name="helpdesk-calls",
        protocol="live_call",
        description=(
            "26 original phone-line scenarios for a company IT service desk (single-intent, "
            "multi-intent, adversarial, escalation, information) with two-step verification "
            "(employee ID + date of birth, one-time code) and callers in English and Spanish"
        ),
        path=HELPDESK_CALLS_PATH,
    )
)
