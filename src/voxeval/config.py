"""The run configuration: one YAML file, validated by pydantic; CLI flags override fields."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject, JSONValue
from voxeval.pickled_memo import PickledMemo
from voxeval.registry import names

# Top-level keys of report/summary.json; systems are also listed there by name.
RESERVED_SUMMARY_KEYS = frozenset(
    {
        "run_id",
        "suite",
        "seed",
        "generated_at",
        "provenance",
        "systems",
        "usage",
        "units",
        "comparisons",
        "pairwise",
        "confounded",
        "input_intelligibility",
        "voices",
        "costs",
    }
)


class ProviderSpec(BaseModel):
    """``{provider: NAME, ...options}``; options go to the provider's constructor.

    Secrets are never options: remote providers take ``api_key_env`` (the name of an
    environment variable) instead of a key.
    """

    model_config = ConfigDict(extra="allow", frozen=True)
    provider: str

    def options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class SystemSpec(BaseModel):
    """A system under test: ``{name: LABEL, type: REGISTERED_SYSTEM, ...options}``."""

    model_config = ConfigDict(extra="allow", frozen=True)
    name: str
    type: str

    def options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class RayOptions(BaseModel):
    """The config's ``ray:`` section: how ``executor: ray`` uses a Ray cluster."""

    model_config = ConfigDict(extra="forbid")
    address: str | None = Field(
        default=None, description="cluster to join (e.g. ray://head:10001); None = start one here"
    )
    workers: int | None = Field(
        default=None, ge=1, description="worker actors; None = the cluster's CPUs / num_cpus"
    )
    num_cpus: dict[str, float] = Field(
        default_factory=dict,
        description="CPUs one worker reserves, by unit kind (protocol name) or 'default'",
    )
    max_retries: int = Field(
        default=3, ge=0, description="times a unit is run again after its worker died"
    )
    lease_batch: int = Field(
        default=4, ge=1, description="rate-limit slots a worker leases per round trip"
    )


class ProcessOptions(BaseModel):
    """The config's ``processes:`` section: how ``executor: processes`` spreads units over
    worker processes of this machine."""

    model_config = ConfigDict(extra="forbid")
    workers: int | None = Field(
        default=None, ge=1, description="worker processes; None = this machine's CPUs"
    )
    max_retries: int = Field(
        default=3, ge=0, description="times a unit is run again after its worker died"
    )
    lease_batch: int = Field(
        default=4, ge=1, description="rate-limit slots a worker leases per round trip"
    )


class RunConfig(BaseModel):
    """Everything a run needs. Protocol-specific sections are free-form mappings that the
    protocol validates itself (``build``, ``simulation``)."""

    model_config = ConfigDict(extra="forbid")

    suite: str = Field(description="built-in suite name, or a path to a suite file/folder")
    systems: list[SystemSpec] = Field(min_length=1)
    judge: ProviderSpec | None = Field(default=None, description="text LLM judge endpoint")
    audio_judge: ProviderSpec | None = None
    asr: ProviderSpec | None = Field(default=None, description="ASR used for scoring")
    mos: ProviderSpec | None = None
    language_id: ProviderSpec | None = Field(
        default=None,
        description="ASR whose language detection names the reply's spoken language "
        "(default: whisper-base)",
    )
    metrics: list[str] | None = Field(default=None, description="None = protocol defaults")
    conditions: list[str] | None = None
    comparisons: list[str] | None = Field(
        default=None,
        description="comparison steps across systems (e.g. pairwise); None = the protocol's "
        "defaults, [] = none",
    )
    perturbations: list[dict[str, Any]] = Field(default_factory=list)
    trials: int = Field(default=1, ge=1)
    # strict: YAML `seed: true` must not become seed 1; negative seeds are invalid for numpy
    seed: int = Field(default=0, ge=0, strict=True)
    concurrency: int = Field(default=2, ge=1)
    executor: Literal["local", "processes", "ray"] = Field(
        default="local",
        description="where units run: this process, worker processes here, or a Ray cluster",
    )
    processes: ProcessOptions = Field(default_factory=ProcessOptions)
    ray: RayOptions = Field(default_factory=RayOptions)
    limit: int | None = Field(default=None, ge=1)
    cache_dir: str | None = None
    pricing: str | None = Field(
        default=None,
        description="price table YAML for report costs (default: the packaged example table)",
    )
    build: dict[str, Any] = Field(default_factory=dict)
    simulation: dict[str, Any] = Field(default_factory=dict)
    scoring: dict[str, Any] = Field(
        default_factory=dict, description="protocol-specific scoring options (validated there)"
    )
    report: dict[str, Any] = Field(default_factory=dict)
    trusted_modules: list[str] = Field(
        default_factory=list,
        description="modules whose functions scenario tools may call (python: hooks)",
    )
    _source: str | None = PrivateAttr(default=None)

    @property
    def source(self) -> str | None:
        """The config file this config was read from (None when built in Python)."""
        return self._source

    @model_validator(mode="after")
    def _system_names_are_usable(self) -> RunConfig:
        seen: set[str] = set()
        for spec in self.systems:
            if spec.name in RESERVED_SUMMARY_KEYS:
                raise ValueError(
                    f"system name {spec.name!r} is reserved (used by report/summary.json); "
                    "choose another name"
                )
            if spec.name in seen:
                raise ValueError(f"two systems are named {spec.name!r}; names must be unique")
            seen.add(spec.name)
        return self

    def system(self, name: str) -> SystemSpec:
        for spec in self.systems:
            if spec.name == name:
                return spec
        raise ConfigError(f"no system named {name!r}; systems: {[s.name for s in self.systems]}")


def format_validation_error(where: str, exc: ValidationError) -> str:
    """One line per problem: ``FILE: field.path: message``."""
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"]) or "<root>"
        lines.append(f"{where}: {loc}: {err['msg']}")
    return "\n".join(lines)


def read_yaml_afresh(path: Path, missing: str) -> Any:
    """The YAML file at ``path`` read now, not memoised (for files rewritten while voxeval
    runs: a study, rubric drafts under review); ``ConfigError`` naming the file with
    ``missing`` when it is not there, or with the parser's message when it is not YAML."""
    if not path.is_file():
        raise ConfigError(f"{path}: {missing}")
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc})") from exc


# A run reads the same suite file from several places; YAML's safe types all pickle.
_parsed = PickledMemo(max_entries=64)


def load_yaml(path: str | Path) -> Any:
    """Parse a YAML file. Parsed files are memoised by (path, mtime, size) because a run reads
    the same suite file from several places; callers get their own copy."""
    p = Path(path)
    try:
        stat = p.stat()
    except FileNotFoundError:
        raise ConfigError(f"{p}: file not found") from None
    key = (str(p.resolve()), stat.st_mtime_ns, stat.st_size)
    try:
        return _parsed.get(key)
    except KeyError:
        pass
    try:
        # libyaml's loader when PyYAML was built with it: ~10x faster on large suite files.
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        data = yaml.load(p.read_text(encoding="utf-8"), Loader=loader)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{p}: invalid YAML ({exc})") from exc
    _parsed.put(key, data)
    return data


def parse_run_config(data: Any, where: str = "<config>") -> RunConfig:
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a mapping at the top level")
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(where, exc)) from exc


# Path-valued fields of a config, resolved against the config file's folder.
_BUILD_PATH_FIELDS = ("dir",)
_REPLAY_PATH_OPTIONS = ("folder", "manifest")


def _resolved(value: JSONValue, base: Path) -> JSONValue:
    if not isinstance(value, str) or not value:
        return value
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else (base / path).resolve())


def _is_registered_suite(name: str) -> bool:

    return name in names("suite")


def resolve_config_paths(data: JSONObject, base: Path) -> JSONObject:
    """A copy of ``data`` whose relative paths are made absolute against ``base`` (the config
    file's folder): ``suite`` (unless it names a registered suite), ``cache_dir``, ``pricing``,
    ``scoring.judge_prompt``, ``build.dir``, ``build.noise_dirs`` and a replay system's
    ``folder``/``manifest``."""
    out = dict(data)
    suite = out.get("suite")
    if isinstance(suite, str) and suite and not _is_registered_suite(suite):
        out["suite"] = _resolved(suite, base)
    for key in ("cache_dir", "pricing"):
        if isinstance(out.get(key), str):
            out[key] = _resolved(out[key], base)
    scoring = out.get("scoring")
    if isinstance(scoring, dict) and isinstance(scoring.get("judge_prompt"), str):
        out["scoring"] = {**scoring, "judge_prompt": _resolved(scoring["judge_prompt"], base)}
    build = out.get("build")
    if isinstance(build, dict):
        build = dict(build)
        for key in _BUILD_PATH_FIELDS:
            if key in build:
                build[key] = _resolved(build[key], base)
        noise_dirs = build.get("noise_dirs")
        if isinstance(noise_dirs, list):
            build["noise_dirs"] = [_resolved(d, base) for d in noise_dirs]
        out["build"] = build
    systems = out.get("systems")
    if isinstance(systems, list):
        resolved_systems = []
        for system in systems:
            if isinstance(system, dict) and system.get("type") == "replay":
                system = dict(system)
                for key in _REPLAY_PATH_OPTIONS:
                    if key in system:
                        system[key] = _resolved(system[key], base)
            resolved_systems.append(system)
        out["systems"] = resolved_systems
    return out


def load_run_config(
    path: str | Path, overrides: Mapping[str, JSONValue] | None = None
) -> RunConfig:
    """Read a run config; ``overrides`` (from CLI flags) replace top-level fields.
    Relative paths in it are resolved against the config file's folder
    (see ``resolve_config_paths``), so a config works from any working directory."""
    p = Path(path)
    data = load_yaml(p) or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{p}: expected a mapping at the top level")
    for key, value in (overrides or {}).items():
        if value is not None:
            data[key] = value
    config = parse_run_config(resolve_config_paths(data, p.parent.resolve()), str(p))
    config._source = str(p)
    return config
