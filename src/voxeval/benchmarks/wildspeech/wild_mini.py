"""The built-in ``wild-mini`` suite: original single-turn spoken queries shipped as package data."""

from __future__ import annotations

from pathlib import Path

from voxeval.benchmarks.suite_info import SUITES, SuiteInfo

WILD_MINI_PATH = Path(__file__).parents[1] / "data" / "wild_mini" / "suite.yaml"

WILD_MINI = SUITES.register("wild-mini")(
    SuiteInfo(
        name="wild-mini",
        protocol="single_turn",
        description=(
            "63 original spoken queries over II/SR/OE/TC and paralinguistic items "
            "(pause, stress, tone, stutter, near-homophone), with checklists and assertions"
        ),
        path=WILD_MINI_PATH,
    )
)
