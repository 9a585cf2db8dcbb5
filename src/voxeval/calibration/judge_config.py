"""Reading a judge endpoint for calibration from a YAML file: a bare provider spec
(``{provider: openai, model: ..., base_url: ...}``) or any file with a ``judge:`` (or
``audio_judge:``) key, such as a run config. Errors name the file and the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from voxeval.api.context import judge_refusal
from voxeval.config import ProviderSpec, format_validation_error, load_yaml
from voxeval.errors import ConfigError, VoxevalError
from voxeval.providers.factory import create_provider
from voxeval.scoring.judge import Judge


def load_judge_spec(path: str | Path, key: str) -> ProviderSpec:
    """The provider spec under ``key`` (``judge`` or ``audio_judge``) in ``path``, or the
    whole file when it is a bare spec (it has ``provider:`` and no ``key``)."""
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"{file}: no such judge config file")
    data = load_yaml(file)
    if not isinstance(data, dict):
        raise ConfigError(f"{file}: expected a mapping (a provider spec or a `{key}:` key)")
    where = f"{file}: {key}"
    if key in data:
        raw: Any = data[key]
        if not isinstance(raw, dict):
            raise ConfigError(f"{where}: expected a provider spec mapping, got {raw!r}")
    elif "provider" in data:
        raw, where = data, str(file)
    else:
        raise ConfigError(
            f"{file}: {key}: missing; give a `{key}:` provider spec or a bare spec with `provider:`"
        )
    try:
        return ProviderSpec.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(where, exc)) from exc


def build_judge(path: str | Path, key: str) -> Judge:
    """A ``Judge`` on the endpoint configured in ``path`` (text for ``judge``, audio for
    ``audio_judge``); a model that must never judge is refused with the reason."""
    spec = load_judge_spec(path, key)
    kind = "audio_llm" if key == "audio_judge" else "llm"
    refusal = judge_refusal(kind, spec)
    if refusal is not None:
        raise ConfigError(f"{path}: {key}: refused as a judge: {refusal}")
    try:
        llm = create_provider(kind, spec)
    except VoxevalError as exc:
        raise ConfigError(f"{path}: {key}: {exc}") from exc
    return Judge(llm, modality="audio" if key == "audio_judge" else "text")  # type: ignore[arg-type]
