"""The built-in ``mtalk-mini`` suite: original multi-turn spoken dialogues shipped as package
data (rendered to audio by ``voxeval build mtalk-mini -o DIR``)."""

from __future__ import annotations

from pathlib import Path

from voxeval.benchmarks.suite_info import SUITES, SuiteInfo

MTALK_MINI_PATH = Path(__file__).parents[1] / "data" / "mtalk_mini" / "suite.yaml"

MTALK_MINI = SUITES.register("mtalk-mini")(
    SuiteInfo(
        name="mtalk-mini",
        protocol="multi_turn",
        description=(
            "54 original spoken dialogues (semantic, paralinguistic, ambient x 9 scenarios "
            "x 2) with capability labels and rubrics; cues and ambient sounds rendered"
        ),
        path=MTALK_MINI_PATH,
    )
)
