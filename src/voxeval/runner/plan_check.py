"""Check a whole run plan before the first call: every mistake in a config is reported at once,
each with its file and field, and nothing is run (``voxeval validate``, and the first step of
``voxeval run``).

Checked for every protocol: the suite resolves, the scoring providers (``judge``,
``audio_judge``, ``asr``, ``mos``) exist, take the given options and can run here. For the
built-in protocols also: system types and options (systems are constructed with placeholder
providers, never called), the providers inside systems, metric names (registered and scoring
the protocol's records), the ``scoring:``, ``build:`` and ``simulation:`` sections, prebuilt
and replay folders, perturbations and conditions, and sections the protocol would ignore.
A plugin protocol adds its own checks with a ``check_plan(config) -> list[str]`` method
(``"field: message"`` lines).
"""

from __future__ import annotations

import inspect
import os
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Never

from pydantic import ValidationError

from voxeval.analysis.costs.prices import load_price_table
from voxeval.api.context import judge_refusal
from voxeval.benchmarks.build_manifest import MANIFEST
from voxeval.benchmarks.build_options import BuildOptions
from voxeval.benchmarks.eva.scenario import load_scenario_suite
from voxeval.benchmarks.mtalk.dialogue_suite import load_dialogue_suite
from voxeval.benchmarks.suite_info import SuiteInfo, resolve_suite
from voxeval.benchmarks.wildspeech.query_suite import load_query_suite, read_suite_header
from voxeval.benchmarks.wildspeech.spoken_query import CONDITIONS
from voxeval.config import ProviderSpec, RunConfig, SystemSpec
from voxeval.errors import ConfigError, UnknownComponent, VoxevalError
from voxeval.json_types import JSONObject, JSONValue
from voxeval.protocols.contract import PROTOCOLS
from voxeval.protocols.live_call import scoring_asr
from voxeval.protocols.live_call_scoring import LiveCallScoring
from voxeval.protocols.multi_turn import CONDITION as MULTI_TURN_CONDITION
from voxeval.protocols.multi_turn import MultiTurnScoring
from voxeval.protocols.single_turn import SingleTurnScoring
from voxeval.providers.asr.spoken_language import base_language
from voxeval.providers.factory import SpecLike
from voxeval.providers.provider_kinds import TTS_PROVIDERS
from voxeval.providers.voices.voice_catalogue import voice_language
from voxeval.registry import lookup
from voxeval.runner.comparison_steps import CONFIG_FIELD as COMPARISONS_FIELD
from voxeval.runner.comparison_steps import step_problems
from voxeval.runner.option_check import as_provider_spec, provider_problems
from voxeval.runner.ray_executor import executor_problems
from voxeval.scoring.metric import METRICS, Metric
from voxeval.simulation.parties import CALLERS
from voxeval.simulation.personas import get_persona
from voxeval.simulation.perturbations import parse_conditions
from voxeval.simulation.simulation_config import ENERGY_VAD, SimulationConfig
from voxeval.systems.factory import missing_capability, removed_spelling

# Config sections each built-in protocol reads; a non-empty section it ignores is a mistake.
_SECTIONS = ("build", "simulation", "perturbations", "scoring")
_SECTIONS_USED = {
    "single_turn": frozenset({"build", "scoring"}),
    "live_call": frozenset({"simulation", "perturbations", "scoring"}),
    "multi_turn": frozenset({"scoring"}),
}
# Scoring providers of the config: field -> provider kind.
_SCORING_PROVIDERS = {"judge": "llm", "audio_judge": "audio_llm", "asr": "asr", "mos": "mos"}


@dataclass
class Problems:
    """``FILE: field: message`` lines, collected until ``raise_if_any``."""

    where: str
    lines: list[str] = field(default_factory=list)

    def add(self, field_path: str, message: str) -> None:
        for line in str(message).splitlines() or [""]:
            self.lines.append(f"{self.where}: {field_path}: {line}")

    def add_validation_error(self, section: str, exc: ValidationError) -> None:
        """One line per pydantic error: ``FILE: section: field: message``."""
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"])
            self.add(section, f"{loc}: {err['msg']}" if loc else err["msg"])

    def raise_if_any(self) -> None:
        if self.lines:
            count = len(self.lines)
            raise ConfigError(
                f"{count} problem{'s' if count > 1 else ''} in the run plan; nothing was run:\n"
                + "\n".join(self.lines)
            )


def validate_plan(config: RunConfig, *, where: str | None = None) -> SuiteInfo | None:
    """Check everything ``config`` asks for; raises one ConfigError listing every problem.
    Returns the resolved suite. Never calls a system or a remote provider."""
    problems = Problems(where or config.source or "config")
    suite = _resolve_suite(config, problems)
    _check_scoring_providers(config, problems)
    if suite is not None:
        protocol = suite.protocol
        _check_unused_sections(config, protocol, problems)
        check = _PROTOCOL_CHECKS.get(protocol)
        if check is not None:
            check(config, suite, problems)
        else:
            _plugin_checks(config, protocol, problems)
        _check_comparisons(config, protocol, problems)
    if config.executor == "ray":
        for field_path, message in executor_problems(config):
            problems.add(field_path, message)
    problems.raise_if_any()
    return suite


def validate_scoring(
    config: RunConfig, suite: SuiteInfo | None, metrics: Sequence[str] | None, *, where: str
) -> None:
    """The checks that matter for re-scoring a finished run: scoring providers, the
    ``scoring:`` section and the metric names (``metrics``, else the config's)."""
    problems = Problems(where)
    _check_scoring_providers(config, problems)
    protocol = suite.protocol if suite is not None else ""
    if protocol == "single_turn":
        _check_single_turn_scoring(config, problems)
    if protocol == "live_call":
        _check_live_call_scoring(config, problems)
    if protocol == "multi_turn":
        _check_multi_turn_scoring(config, problems)
    if metrics is None:
        _check_metrics(protocol, config.metrics, "metrics", problems)
    else:
        _check_metrics(protocol, metrics, "--metrics", problems)
    problems.raise_if_any()


# -- every protocol -----------------------------------------------------------------------


def _resolve_suite(config: RunConfig, problems: Problems) -> SuiteInfo | None:

    try:
        suite = resolve_suite(config.suite)
    except VoxevalError as exc:
        problems.add("suite", str(exc))
        return None
    try:
        PROTOCOLS.lookup(suite.protocol)
    except UnknownComponent as exc:
        problems.add("suite", f"{suite.path}: protocol: {exc}")
        return None
    return suite


def _check_scoring_providers(config: RunConfig, problems: Problems) -> None:
    for field_name, kind in _SCORING_PROVIDERS.items():
        spec = getattr(config, field_name)
        if spec is not None:
            for line in provider_problems(kind, spec):
                problems.add(field_name, line)
            refusal = judge_refusal(kind, spec) if field_name.endswith("judge") else None
            if refusal is not None:
                problems.add(f"{field_name}.provider", f"refused as a judge: {refusal}")
    if config.cache_dir and Path(config.cache_dir).exists() and not Path(config.cache_dir).is_dir():
        problems.add("cache_dir", f"{config.cache_dir} exists and is not a folder")
    if config.pricing:
        try:  # a bad price table fails now, not in the report after every unit has run
            load_price_table(config.pricing)
        except ConfigError as exc:
            problems.add("pricing", str(exc))


def _check_unused_sections(config: RunConfig, protocol: str, problems: Problems) -> None:
    used = _SECTIONS_USED.get(protocol)
    if used is None:
        return  # a plugin protocol reads what it likes
    for section in _SECTIONS:
        if section not in used and getattr(config, section):
            problems.add(section, f"the {protocol} protocol does not use this section; remove it")


def _plugin_checks(config: RunConfig, protocol: str, problems: Problems) -> None:
    for line in PROTOCOLS.lookup(protocol)().check_plan(config):
        field_path, _, message = str(line).partition(": ")
        problems.add(field_path, message)


def _check_comparisons(config: RunConfig, protocol: str, problems: Problems) -> None:
    for message in step_problems(config, PROTOCOLS.lookup(protocol)(), protocol):
        problems.add(COMPARISONS_FIELD, message)


def metric_record_type(metric: Metric[Never, Never]) -> type | None:
    """The record type a metric scores (its first parameter's annotation), if declared.
    (``Metric`` is contravariant in its record: any metric is a ``Metric[Never]``.)"""
    try:
        hints = typing.get_type_hints(metric)
        first = next(iter(inspect.signature(metric).parameters), None)
    except Exception:
        return None
    hint = hints.get(first) if first else None
    return hint if isinstance(hint, type) else None


def _check_metrics(
    protocol: str, wanted: Sequence[str] | None, field_name: str, problems: Problems
) -> None:
    try:
        record_type = PROTOCOLS.lookup(protocol).record_type
    except VoxevalError:
        return  # an unknown protocol is reported by the config check
    if record_type is None or not wanted:
        return
    known = METRICS.names()
    applicable = [m for m in known if _scores(METRICS.lookup(m), record_type)]
    for i, metric in enumerate(wanted):
        here = f"{field_name}.{i}"
        if metric not in known:
            problems.add(
                here, f"unknown metric {metric!r}; {protocol} metrics: {', '.join(applicable)}"
            )
        elif metric not in applicable:
            problems.add(
                here,
                f"metric {metric!r} does not apply to the {protocol} protocol; "
                f"its metrics: {', '.join(applicable)}",
            )


def _scores(metric: Metric[Never, Never], record_type: type) -> bool:
    declared = metric_record_type(metric)
    return declared is None or issubclass(record_type, declared)


# -- single_turn --------------------------------------------------------------------------


class _PlannedProvider:
    """Stands in for a provider while a system is constructed to check its spec."""

    def __init__(self, kind: str, provider: str) -> None:
        self.kind, self.name = kind, provider

    def identity(self) -> JSONObject:
        return {"provider": self.name, "planned": True}


class _PlanningContext:
    """Stands in for the run context while a system is constructed: provider specs are
    checked and replaced by placeholders, so nothing is loaded and nothing is called.
    A problem is reported at the option that holds the provider (``systems.0 (x).llm``)."""

    def __init__(
        self, config: RunConfig, problems: Problems, field_path: str, options: JSONObject
    ) -> None:
        self.config, self._problems, self._field = config, problems, field_path
        self._options = options

    def _field_of(self, spec: SpecLike) -> str:
        wanted = as_provider_spec(spec)
        for option, value in self._options.items():
            if isinstance(value, str | dict) and as_provider_spec(value) == wanted:
                return f"{self._field}.{option}"
        return self._field

    # Any: the placeholder stands for whichever provider kind the system asks for
    def provider(self, kind: str, spec: SpecLike, *, cache: bool = True) -> Any:
        for line in provider_problems(kind, spec):
            self._problems.add(self._field_of(spec), line)
        if isinstance(spec, ProviderSpec):
            name: JSONValue = spec.provider
        else:
            name = spec.get("provider") if isinstance(spec, dict) else spec
        return _PlannedProvider(kind, str(name))


def _system_label(index: int, name: str) -> str:
    return f"systems.{index} ({name})"


def _check_header_variables(spec: SystemSpec, here: str, problems: Problems) -> None:
    """``headers_env: {Header: VARIABLE}`` must name variables that are set."""
    mapping = spec.options().get("headers_env")
    if not isinstance(mapping, dict):
        return
    for header, variable in mapping.items():
        if isinstance(variable, str) and not os.environ.get(variable):
            problems.add(
                f"{here}.headers_env.{header}", f"environment variable {variable} is not set"
            )


def _check_systems(config: RunConfig, protocol: str, problems: Problems) -> None:
    """Each system's type exists and can serve ``protocol`` (checked on its class, before
    anything is built), then its options and providers (built with placeholder providers)."""

    for i, spec in enumerate(config.systems):
        here = _system_label(i, spec.name)
        _check_header_variables(spec, here, problems)
        if (refusal := removed_spelling(spec)) is not None:  # the 0.1 spellings
            problems.add(f"{here}.type", refusal)
            continue
        try:
            cls = lookup("system", spec.type)
        except UnknownComponent as exc:
            problems.add(f"{here}.type", str(exc))
            continue
        lacking = missing_capability(spec, protocol, PROTOCOLS.lookup(protocol).system_needs)
        if lacking is not None:
            problems.add(f"{here}.type", lacking)
            continue
        try:
            planning = _PlanningContext(config, problems, here, spec.options())
            cls.from_spec(spec, planning)
        except (VoxevalError, ValidationError) as exc:
            problems.add(here, str(exc))
        except Exception:  # a limit of this check, not a config mistake: the run reports it
            pass


def plan_notes(config: RunConfig) -> list[str]:
    """Notes that do not stop a run, e.g. a multi-turn run without a judge."""

    notes: list[str] = []
    if _suite_protocol(config) == "multi_turn":
        rubric = config.scoring.get("rubric") if isinstance(config.scoring, dict) else None
        rubric = rubric if isinstance(rubric, dict) else {}
        # the rubric metrics hear audio in mode audio and under the reference protocol
        heard = rubric.get("mode") == "audio" or rubric.get("protocol") == "reference"
        if heard and config.audio_judge is None:
            notes.append(
                "no audio judge configured: the rubric metrics (rubric, rubric_turns) judge "
                "from audio (scoring.rubric) and will be not_run; set `audio_judge:`"
            )
        if config.judge is None and not heard:
            notes.append(
                "no judge configured: the rubric metrics (rubric, rubric_turns) will be "
                "not_run, and so will the arena comparisons; set `judge:` to score the "
                "dialogues"
            )
    return [note for note in notes if note is not None]


def _suite_protocol(config: RunConfig) -> str | None:
    try:
        return resolve_suite(config.suite).protocol
    except VoxevalError:
        return None  # reported by validate_plan


def _check_single_turn_scoring(config: RunConfig, problems: Problems) -> None:

    try:
        SingleTurnScoring.model_validate(config.scoring)
    except ValidationError as exc:
        problems.add_validation_error("scoring", exc)


def _check_live_call_scoring(config: RunConfig, problems: Problems) -> None:
    try:
        LiveCallScoring.model_validate(config.scoring)
    except ValidationError as exc:
        problems.add_validation_error("scoring", exc)


def _check_build(config: RunConfig, problems: Problems) -> bool:
    """Problems of ``build:``; True when it names a prebuilt folder (no rendering)."""

    try:
        options = BuildOptions.model_validate(config.build or {})
    except ValidationError as exc:
        problems.add_validation_error("build", exc)
        return False
    prebuilt = bool(options.dir) and options.model_fields_set <= {"dir"}
    if prebuilt and not (Path(str(options.dir)) / MANIFEST).is_file():
        problems.add(
            "build.dir",
            f"{options.dir}: no prebuilt suite there ({MANIFEST} missing). Build it first "
            "(voxeval build), or give build options (e.g. profiles) to render into it",
        )
    for i, folder in enumerate(options.noise_dirs):
        if not Path(folder).is_dir():
            problems.add(f"build.noise_dirs.{i}", f"{folder}: folder not found")
    for i, engine in enumerate(options.engines):
        if engine not in TTS_PROVIDERS.names():
            problems.add(
                f"build.engines.{i}",
                f"unknown tts engine {engine!r}; known: {', '.join(TTS_PROVIDERS.names())}",
            )
    try:
        options.profile_specs()
    except VoxevalError as exc:
        problems.add("build.profiles", str(exc))
    return prebuilt


def _check_query_suite(suite: SuiteInfo, problems: Problems) -> None:
    """Load the queries of a YAML suite in voxeval's own format (datasets are read later)."""

    try:
        if read_suite_header(suite.path).format != "voxeval":
            return
        load_query_suite(suite.path)
    except VoxevalError as exc:
        problems.add("suite", str(exc))


def _check_single_turn(config: RunConfig, suite: SuiteInfo, problems: Problems) -> None:

    _check_systems(config, "single_turn", problems)
    _check_single_turn_scoring(config, problems)
    _check_metrics("single_turn", config.metrics, "metrics", problems)
    prebuilt = _check_build(config, problems)
    for i, condition in enumerate(config.conditions or []):
        if condition not in CONDITIONS:
            problems.add(
                f"conditions.{i}",
                f"unknown condition {condition!r}; known: {', '.join(CONDITIONS)}",
            )
    if not prebuilt:
        _check_query_suite(suite, problems)


# -- live_call ----------------------------------------------------------------------------


def _check_simulation(config: RunConfig, problems: Problems) -> None:

    try:
        sim = SimulationConfig.model_validate(config.simulation or {})
    except ValidationError as exc:
        problems.add_validation_error("simulation", exc)
        return
    try:
        caller = CALLERS.lookup(sim.caller)
    except UnknownComponent as exc:
        problems.add("simulation.caller", str(exc))
        caller = None
    if caller is not None and caller.needs_llm and sim.caller_llm is None:
        problems.add("simulation.caller_llm", f"caller {sim.caller!r} needs an LLM")
    providers = {"caller_llm": ("llm", sim.caller_llm), "vad": ("vad", sim.vad)}
    if sim.mode == "audio":
        providers["caller_asr"] = ("asr", sim.caller_asr)
        if sim.turn_vad_spec().provider != ENERGY_VAD:
            providers["turn_vad"] = ("vad", sim.turn_vad_spec())
        if sim.min_interruption_words:
            providers["interruption_asr"] = ("asr", sim.interruption_asr)
    for field_name, (kind, spec) in providers.items():
        if spec is not None:
            for line in provider_problems(kind, spec):
                problems.add(f"simulation.{field_name}", line)
    for field_path, why in sim.language_problems().items():  # voices/ASR vs the language
        problems.add(field_path, why)
    _check_condition_voices(config, sim.language, problems)
    try:
        scoring_asr(config.asr, sim.language)
    except ConfigError as exc:
        problems.add("asr", str(exc).removeprefix("asr: "))
    speaks = caller.speaks if caller is not None else None  # None: any language
    if speaks is not None and base_language(sim.language) not in speaks:
        problems.add(
            "simulation.caller",
            f"the {sim.caller!r} caller speaks {', '.join(speaks)}, not {sim.language!r}; "
            "use caller: llm for other languages",
        )
    try:
        get_persona(sim.persona)
    except ConfigError as exc:
        problems.add("simulation.persona", str(exc))


def _check_condition_voices(config: RunConfig, language: str, problems: Problems) -> None:
    """A perturbation's explicit ``voice`` must speak the run's language too."""
    for n, entry in enumerate(config.perturbations):
        voice = entry.get("voice") if isinstance(entry, dict) else None
        if not isinstance(voice, str):
            continue
        try:
            spoken = voice_language(voice)
        except ConfigError as exc:
            problems.add(f"perturbations.{n}.voice", str(exc))
            continue
        if spoken is not None and base_language(spoken) != base_language(language):
            problems.add(
                f"perturbations.{n}.voice",
                f"voice {voice!r} speaks {spoken!r}, but simulation.language is {language!r}",
            )


def _condition_names(config: RunConfig, problems: Problems) -> set[str] | None:
    """Names of the conditions ``perturbations:`` defines (with ``clean``), None when an
    entry is wrong (each wrong entry is reported)."""

    ok = True
    for n, entry in enumerate(config.perturbations):
        try:
            parse_conditions([entry], where="perturbations")
        except ConfigError as exc:
            ok = False
            message = str(exc).replace("perturbations.0", f"perturbations.{n}", 1)
            field_path, _, text = message.partition(": ")
            if field_path.startswith(f"perturbations.{n}"):
                problems.add(field_path, text)
            else:  # raised by the perturbation itself, without the entry's position
                problems.add(f"perturbations.{n}", message)
    if not ok:
        return None
    try:
        return {c.name for c in parse_conditions(config.perturbations)}
    except ConfigError as exc:
        field_path, _, text = str(exc).partition(": ")
        problems.add(field_path, text)
        return None


def _check_live_call(config: RunConfig, suite: SuiteInfo, problems: Problems) -> None:

    _check_systems(config, "live_call", problems)
    _check_simulation(config, problems)
    _check_live_call_scoring(config, problems)
    _check_metrics("live_call", config.metrics, "metrics", problems)
    defined = _condition_names(config, problems)
    if defined is not None:
        for i, condition in enumerate(config.conditions or []):
            if condition not in defined:
                problems.add(
                    f"conditions.{i}",
                    f"unknown condition {condition!r}; defined: {', '.join(sorted(defined))} "
                    "(add a perturbations: entry with condition: NAME)",
                )
    language = (config.simulation or {}).get("language")
    try:
        load_scenario_suite(
            suite.path,
            trusted_modules=config.trusted_modules,
            language=language if isinstance(language, str) else None,
        )
    except VoxevalError as exc:
        problems.add("suite", str(exc))


# -- multi_turn ---------------------------------------------------------------------------


def _check_multi_turn_scoring(config: RunConfig, problems: Problems) -> None:
    try:
        MultiTurnScoring.model_validate(config.scoring)
    except ValidationError as exc:
        problems.add_validation_error("scoring", exc)


def _check_multi_turn(config: RunConfig, suite: SuiteInfo, problems: Problems) -> None:
    """Systems can reply turn by turn, the scoring section and metrics fit, the dialogues
    load (ids, criteria, recordings), and the only condition is ``clean``. A missing judge
    is not a mistake: the judged metrics are then not run, with the reason (see
    ``plan_notes``)."""
    _check_systems(config, "multi_turn", problems)
    _check_multi_turn_scoring(config, problems)
    _check_metrics("multi_turn", config.metrics, "metrics", problems)
    for i, condition in enumerate(config.conditions or []):
        if condition != MULTI_TURN_CONDITION:
            problems.add(
                f"conditions.{i}",
                f"unknown condition {condition!r}; the multi_turn protocol has only "
                f"{MULTI_TURN_CONDITION!r}",
            )
    try:
        load_dialogue_suite(suite.path)
    except VoxevalError as exc:
        problems.add("suite", str(exc))


_PROTOCOL_CHECKS: dict[str, Callable[[RunConfig, SuiteInfo, Problems], None]] = {
    "single_turn": _check_single_turn,
    "live_call": _check_live_call,
    "multi_turn": _check_multi_turn,
}
