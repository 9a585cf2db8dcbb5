"""Benchmark items, built-in suites, loaders and builders."""

from voxeval.benchmarks.build import build_suite, prepare_suite_audio
from voxeval.benchmarks.build_manifest import BuiltSuite, RenderedQuery, load_built_suite
from voxeval.benchmarks.build_options import PROFILE_GRID, BuildOptions, parse_build_options
from voxeval.benchmarks.eva.clinic_calls import CLINIC_CALLS
from voxeval.benchmarks.eva.scenario import Scenario, ScenarioSuite, ScriptStep, load_scenario_suite
from voxeval.benchmarks.mtalk.dialogue import (
    Capability,
    Criterion,
    Dialogue,
    Rubrics,
    UserTurn,
    turn_item_id,
)
from voxeval.benchmarks.mtalk.dialogue_suite import (
    DialogueSuite,
    load_dialogue_suite,
    write_dialogue_suite,
)
from voxeval.benchmarks.mtalk.mtalk_import import MTalkImport, write_mtalk_suite
from voxeval.benchmarks.mtalk.mtalk_mini import MTALK_MINI
from voxeval.benchmarks.mtalk.mtalk_release import import_mtalk_release
from voxeval.benchmarks.noise import NoiseClip, NoiseLibrary
from voxeval.benchmarks.noise_sources import NOISE_CATEGORIES
from voxeval.benchmarks.suite_info import SuiteInfo, list_suites, resolve_suite
from voxeval.benchmarks.wildspeech.query_suite import load_query_suite
from voxeval.benchmarks.wildspeech.render import render_query
from voxeval.benchmarks.wildspeech.spoken_query import (
    CATEGORIES,
    CONDITIONS,
    PF_SUBCATEGORIES,
    Assertion,
    ProsodyMark,
    RenderSpec,
    SpeakerSpec,
    SpokenQuery,
)
from voxeval.benchmarks.wildspeech.wild_mini import WILD_MINI

__all__ = [
    "CATEGORIES",
    "CLINIC_CALLS",
    "CONDITIONS",
    "MTALK_MINI",
    "NOISE_CATEGORIES",
    "PF_SUBCATEGORIES",
    "PROFILE_GRID",
    "WILD_MINI",
    "Assertion",
    "BuildOptions",
    "BuiltSuite",
    "Capability",
    "Criterion",
    "Dialogue",
    "DialogueSuite",
    "MTalkImport",
    "NoiseClip",
    "NoiseLibrary",
    "ProsodyMark",
    "RenderSpec",
    "RenderedQuery",
    "Rubrics",
    "Scenario",
    "ScenarioSuite",
    "ScriptStep",
    "SpeakerSpec",
    "SpokenQuery",
    "SuiteInfo",
    "UserTurn",
    "build_suite",
    "import_mtalk_release",
    "list_suites",
    "load_built_suite",
    "load_dialogue_suite",
    "load_query_suite",
    "load_scenario_suite",
    "parse_build_options",
    "prepare_suite_audio",
    "render_query",
    "resolve_suite",
    "turn_item_id",
    "write_dialogue_suite",
    "write_mtalk_suite",
]
