"""Live-call scenarios (EVA-style): the caller's goal, persona, the scenario database before and
after a successful call, the agent definition, and the expected path a scripted agent plays."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from voxeval.benchmarks.eva.placeholders import (
    fill_placeholders,
    has_placeholders,
    placeholder_values,
)
from voxeval.benchmarks.tools.argument_coercion import COERCE, STRICT, ToolArguments
from voxeval.benchmarks.tools.database import Database
from voxeval.benchmarks.tools.db_compare import REFERENCE_SETTINGS, TaskCompletionSettings
from voxeval.benchmarks.tools.tool_runtime import resolve_scenario_tools
from voxeval.benchmarks.tools.tool_spec import HookTrust, ToolSpec, check_tables, load_tool_specs
from voxeval.config import format_validation_error, load_yaml
from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject, JSONReadValue, JSONValue

Category = Literal[
    "single_intent",
    "multi_intent",
    "adversarial",
    "escalation",
    "information",
]
SESSION_KEY = "session"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _OpenGoal(BaseModel):
    """User-goal parts keep keys beyond the known ones (EVA-Bench records carry e.g.
    ``decision_tree.must_have`` or ``resolution``; the reference accepts any user goal); the
    caller is shown them (``extra_details``)."""

    model_config = ConfigDict(extra="allow")

    def extra_details(self) -> JSONObject:
        """The keys this model does not know, as given."""
        return dict(self.model_extra or {})


class DecisionTree(_OpenGoal):
    """Rules that make the caller's choices deterministic across trials."""

    must_have_criteria: list[str] = Field(default_factory=list)
    nice_to_have_criteria: list[str] = Field(default_factory=list)
    negotiation_behavior: list[str] = Field(default_factory=list)
    resolution_condition: str = ""
    failure_condition: str = ""
    escalation_behavior: str = ""
    edge_cases: list[str] = Field(default_factory=list)


class UserGoal(_OpenGoal):
    high_level_user_goal: str
    decision_tree: DecisionTree = Field(default_factory=DecisionTree)
    # label -> value the caller discloses only when asked (member ID, date of birth, ...)
    information_required: dict[str, Any] = Field(default_factory=dict)
    starting_utterance: str


class ToolCallSpec(_Strict):
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class ScriptStep(_Strict):
    """One agent turn of a scripted path: tool calls run first, then ``say`` is spoken."""

    say: str = ""
    tool_calls: list[ToolCallSpec] = Field(default_factory=list)
    end_call: bool = False


class AgentDefinition(_Strict):
    role: str
    instructions: str  # the policy the agent must follow
    # tool names from the suite's tools.yaml, or inline tool declarations (same format)
    tools: list[str | dict[str, Any]] = Field(default_factory=list)
    greeting: str = ""

    def tool_names(self) -> list[str]:
        return [t if isinstance(t, str) else str(t.get("name", "")) for t in self.tools]


class Scenario(_Strict):
    id: str
    domain: str = ""
    category: Category = "single_intent"
    description: str = ""
    current_date_time: str
    user_goal: UserGoal
    user_persona: str
    # optional structured persona facts (name, gender, voice) for callers that need them
    persona_traits: dict[str, str] = Field(default_factory=dict)
    # record tables (key -> record); plain values and list tables are kept as they are.
    # Typed ``Database`` where it is used; the field stays unvalidated (``Any``) because
    # pydantic cannot build a schema for the recursive JSON alias, and validating it as
    # pydantic's JsonValue would also cost time on large released databases
    initial_db: dict[str, Any]
    # same shape as initial_db plus an optional ``session`` mapping for the auth check
    expected_db: dict[str, Any]
    agent: AgentDefinition
    agent_script: list[ScriptStep] = Field(default_factory=list)
    wrong_script: list[ScriptStep] | None = None
    # labels of information_required that are key entities (IDs, dates, codes); empty = all
    key_entities: list[str] = Field(default_factory=list)
    # per-language values of <PLACEHOLDER> tokens in the fields above (eva/placeholders.py)
    culture_overrides: dict[str, dict[str, Any]] = Field(default_factory=dict)
    romanized_culture_overrides: dict[str, dict[str, Any]] = Field(default_factory=dict)
    # the caller's opening line per language; wins over user_goal.starting_utterance
    starting_utterances: dict[str, str] = Field(default_factory=dict)
    # the language the caller speaks (placeholders are resolved for it by in_language)
    language: str = "en"

    @model_validator(mode="before")
    @classmethod
    def _dates_as_text(cls, data: Any) -> Any:
        # unquoted YAML dates (1979-11-02) load as date objects; tools compare ISO strings
        return _iso_dates(data)

    @field_validator("id")
    @classmethod
    def _id_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("expected_db")
    @classmethod
    def _expected_shape(cls, value: Database) -> Database:
        # other entries may be record tables, lists or plain values (``_current_date``);
        # tools that name one check its shape (``check_tables``)
        # ``session: null`` (as released records may hold) means no session is expected
        session = value.get(SESSION_KEY)
        if session is not None and not isinstance(session, dict):
            raise ValueError("'session' must be a mapping of field -> value, or null")
        return value

    def languages(self) -> list[str]:
        """Languages this scenario can be played in (its own plus every override)."""
        return sorted({self.language, *self.culture_overrides, *self.starting_utterances})

    def in_language(self, language: str, where: str = "") -> Scenario:
        """This scenario for a caller speaking ``language``: placeholders resolved from the
        overrides, the opening line taken from ``starting_utterances`` when it has one."""
        label = f"{where or self.id}: "
        if language not in self.languages():
            raise ConfigError(
                f"{label}no variant for language {language!r} (available: "
                f"{', '.join(self.languages())}); add culture_overrides/starting_utterances for it"
            )
        data = self.model_dump(mode="json")
        if self.culture_overrides:
            values = placeholder_values(
                self.culture_overrides, self.romanized_culture_overrides, language, label
            )
            keep = {"culture_overrides", "romanized_culture_overrides", "starting_utterances"}
            for field, value in list(data.items()):
                if field not in keep:
                    data[field] = fill_placeholders(value, values, f"{label}{field}")
            utterance = self.starting_utterances.get(language)
            if utterance is not None:
                text = fill_placeholders(utterance, values, f"{label}starting_utterances")
                data["user_goal"]["starting_utterance"] = text
        elif language in self.starting_utterances:
            data["user_goal"]["starting_utterance"] = self.starting_utterances[language]
        if not self.culture_overrides and has_placeholders(
            {k: v for k, v in data.items() if k != "starting_utterances"}
        ):
            raise ConfigError(f"{label}holds <PLACEHOLDER> tokens but no culture_overrides")
        data["language"] = language
        return Scenario.model_validate(data)

    @property
    def expected_session(self) -> JSONObject:
        session = self.expected_db.get(SESSION_KEY) or {}
        return dict(session)

    @property
    def expected_tables(self) -> Database:
        """The expected database without ``session`` (tables and plain values)."""
        return {k: v for k, v in self.expected_db.items() if k != SESSION_KEY}

    @property
    def entities(self) -> dict[str, str]:
        """Key entities the caller must convey (used by the entity transcription diagnostic)."""
        info = self.user_goal.information_required
        labels = self.key_entities or list(info)
        return {
            label: str(info[label])
            for label in labels
            if label in info and isinstance(info[label], str | int | float) and str(info[label])
        }


@dataclass(frozen=True)
class ScenarioSuite:
    """A loaded live-call suite: its tool library and scenarios (in file order)."""

    name: str
    path: Path
    tools: dict[str, ToolSpec]
    scenarios: list[Scenario]
    description: str = ""
    trust: HookTrust | None = None  # where the tools' python hooks may come from
    language: str = "en"  # the callers' language; placeholders are resolved for it
    # how final databases are compared (suite.yaml ``task_completion:``)
    task_completion: TaskCompletionSettings = REFERENCE_SETTINGS
    # suite.yaml ``tool_arguments:``: ``strict`` refuses arguments that do not match a tool's
    # schema; ``coerce`` converts mismatched types as the EVA-Bench reference's tools do and
    # records the mismatch (benchmarks/tools/argument_coercion.py)
    tool_arguments: ToolArguments = STRICT

    def get(self, scenario_id: str) -> Scenario:
        for scenario in self.scenarios:
            if scenario.id == scenario_id:
                return scenario
        raise ConfigError(f"{self.path}: no scenario {scenario_id!r}")

    def tools_for(self, scenario: Scenario) -> dict[str, ToolSpec]:

        return resolve_scenario_tools(scenario, self.tools, self.trust)


def load_scenario_suite(
    path: str | Path, *, trusted_modules: Sequence[str] = (), language: str | None = None
) -> ScenarioSuite:
    """Load a suite file (or a folder holding ``suite.yaml``).

    Suite file: ``protocol: live_call``, ``domain: tools.yaml`` (the tool library, relative to
    the suite file), ``scenarios:`` a folder, or a list of inline scenarios and/or file/folder
    paths, and optional ``defaults:`` (scenario fields shared by every scenario, e.g. the
    ``agent``; a scenario's own fields win). Scenario files hold one scenario or a list.

    Python tool hooks must come from ``trusted_modules`` or installed plugins, and every table
    a scenario's tools name must be in its database; both are checked here.

    ``language`` (default: the suite's ``language:``, else English) picks the callers'
    language: each scenario's placeholders are resolved for it (``Scenario.in_language``).

    ``task_completion:`` (optional) sets how final databases are compared: ``order_free_lists``
    (fields whose lists are compared regardless of order; default: the EVA-Bench set) and
    ``sort_all_lists`` (ignore the order of every list; default false), ``require_session``.

    ``tool_arguments:`` (optional) ``strict`` (default) or ``coerce`` (what ``import-eva``
    writes: argument types are converted as the EVA-Bench reference's tools convert them)."""

    trust = HookTrust(tuple(trusted_modules))

    suite_path = Path(path)
    if suite_path.is_dir():
        suite_path = suite_path / "suite.yaml"
    data = load_yaml(suite_path)
    if not isinstance(data, dict):
        raise ConfigError(f"{suite_path}: expected a mapping at the top level")
    if data.get("protocol", "live_call") != "live_call":
        raise ConfigError(f"{suite_path}: protocol: expected 'live_call', got {data['protocol']!r}")
    base = suite_path.parent
    tools_ref = data.get("domain") or data.get("tools")
    if not isinstance(tools_ref, str):
        raise ConfigError(f"{suite_path}: domain: give the path of the tool definitions YAML")
    tools = load_tool_specs(base / tools_ref, trust)
    entries = data.get("scenarios")
    if isinstance(entries, str):
        entries = [entries]
    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{suite_path}: scenarios: give a folder or a non-empty list")
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise ConfigError(f"{suite_path}: defaults: expected a mapping of scenario fields")
    defaults = {"domain": str(data.get("domain_name") or data.get("name") or base.name), **defaults}
    scenarios: list[Scenario] = []
    for n, entry in enumerate(entries):
        if isinstance(entry, dict):
            raw: list[tuple[str, JSONValue]] = [(f"{suite_path}: scenarios.{n}", entry)]
        elif isinstance(entry, str):
            raw = _read_scenario_files(base / entry)
        else:
            raise ConfigError(f"{suite_path}: scenarios.{n}: expected a mapping or a path")
        scenarios += [_parse_scenario(item, where, defaults, tools, trust) for where, item in raw]
    completion = _task_completion_settings(data.get("task_completion"), suite_path)
    tool_arguments = data.get("tool_arguments", STRICT)
    if tool_arguments not in (STRICT, COERCE):
        raise ConfigError(
            f"{suite_path}: tool_arguments: expected {STRICT!r} or {COERCE!r}, "
            f"got {tool_arguments!r}"
        )
    language = language or str(data.get("language") or "en")
    scenarios = [s.in_language(language, f"{suite_path}: scenario {s.id}") for s in scenarios]
    seen: set[str] = set()
    for scenario in scenarios:
        if scenario.id in seen:
            raise ConfigError(f"{suite_path}: scenario id {scenario.id!r} appears twice")
        seen.add(scenario.id)
    return ScenarioSuite(
        name=str(data.get("name") or base.name),
        path=suite_path,
        tools=tools,
        scenarios=scenarios,
        description=str(data.get("description", "")),
        trust=trust,
        language=language,
        task_completion=completion,
        tool_arguments=tool_arguments,
    )


def _task_completion_settings(data: JSONReadValue, suite_path: Path) -> TaskCompletionSettings:
    if data is None:
        return REFERENCE_SETTINGS
    if not isinstance(data, dict):
        raise ConfigError(f"{suite_path}: task_completion: expected a mapping")
    try:
        return TaskCompletionSettings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(f"{suite_path}: task_completion", exc)) from exc


def _read_scenario_files(path: Path) -> list[tuple[str, JSONValue]]:
    files = sorted(path.glob("*.y*ml")) if path.is_dir() else [path]
    if not files:
        raise ConfigError(f"{path}: no scenario YAML files found")
    out: list[tuple[str, JSONValue]] = []
    for file in files:
        content = load_yaml(file)
        if isinstance(content, dict) and isinstance(content.get("scenarios"), list):
            content = content["scenarios"]
        if isinstance(content, list):
            out += [(f"{file}: scenarios.{i}", item) for i, item in enumerate(content)]
        else:
            out.append((str(file), content))
    return out


def _parse_scenario(
    item: JSONValue,
    where: str,
    defaults: JSONObject,
    tools: dict[str, ToolSpec],
    trust: HookTrust | None = None,
) -> Scenario:
    if not isinstance(item, dict):
        raise ConfigError(f"{where}: a scenario must be a mapping")

    label = f"{where}: scenario {item.get('id', '?')}"
    try:
        scenario = Scenario.model_validate({**defaults, **item})
    except ValidationError as exc:
        raise ConfigError(format_validation_error(label, exc)) from exc
    available = resolve_scenario_tools(scenario, tools, trust)
    check_tables(available, {**scenario.expected_tables, **scenario.initial_db}, label)
    for script_name in ("agent_script", "wrong_script"):
        for s, step in enumerate(getattr(scenario, script_name) or []):
            for c, call in enumerate(step.tool_calls):
                if call.name not in available:
                    raise ConfigError(
                        f"{label}: {script_name}.{s}.tool_calls.{c}.name: tool {call.name!r} is "
                        f"not available to this agent ({', '.join(sorted(available))})"
                    )
    return scenario


def _iso_dates(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _iso_dates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_iso_dates(v) for v in value]
    return value
