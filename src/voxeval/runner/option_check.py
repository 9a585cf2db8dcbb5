"""Check a component's options and a provider spec without creating the component.

Providers and agents take their options as constructor keywords, so the constructor signature
is their options model: parameter names, type annotations and defaults become a pydantic model
(``extra="forbid"``). Keywords declared as ``**options: Unpack[SomeTypedDict]`` (options shared
by several providers, e.g. ``EndpointOptions``) are the typed dict's fields. A constructor taking
plain ``**kwargs`` forwards them to its base class, whose signature is used in turn; one that
swallows them (no base ``__init__``) accepts any option.
Nothing here loads a model or sends a request.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from voxeval.config import ProviderSpec
from voxeval.errors import UnknownComponent
from voxeval.json_types import JSONReadObject, JSONReadValue
from voxeval.providers.factory import availability
from voxeval.registry import lookup, names

_KEYWORD_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_MODEL_CONFIG = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


def _unpacked_fields(annotation: Any) -> dict[str, tuple[Any, Any]] | None:
    """The fields of ``Unpack[SomeTypedDict]`` (all optional), None for any other annotation."""
    if typing.get_origin(annotation) is not typing.Unpack:
        return None
    (typed_dict,) = typing.get_args(annotation)
    if not typing.is_typeddict(typed_dict):
        return None
    hints = typing.get_type_hints(typed_dict)
    # pydantic does not validate defaults, so None stands for "not given" whatever the type
    return {name: (hint, None) for name, hint in hints.items()}


def _init_fields(init: Any) -> tuple[dict[str, tuple[Any, Any]], bool]:
    """(name -> (annotation, default)) of one ``__init__``, and whether it forwards untyped
    ``**kwargs`` to its base class."""
    try:
        hints = typing.get_type_hints(init)
    except Exception:  # an annotation that only resolves for type checkers: accept any value
        hints = {}
    fields: dict[str, tuple[Any, Any]] = {}
    forwards = False
    for position, (name, param) in enumerate(inspect.signature(init).parameters.items()):
        if position == 0:
            continue  # self
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            unpacked = _unpacked_fields(hints.get(name))
            if unpacked is None:
                forwards = True
            else:
                fields.update(unpacked)
        elif param.kind in _KEYWORD_KINDS:
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[name] = (hints.get(name, Any), default)
    return fields, forwards


@functools.cache
def options_model(cls: type, supplied: frozenset[str] = frozenset()) -> type[BaseModel] | None:
    """A model of the keyword options ``cls(...)`` accepts, leaving out ``supplied`` (filled in
    by a factory, not by the user); None when ``cls`` accepts any option."""
    fields: dict[str, tuple[Any, Any]] = {}
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        if klass is object:
            return None  # **kwargs swallowed without a base class to check them
        own, forwards = _init_fields(init)
        for name, field in own.items():
            fields.setdefault(name, field)  # the subclass's declaration wins
        if not forwards:
            break
    kept = {name: field for name, field in fields.items() if name not in supplied}
    try:
        return create_model(f"{cls.__name__}Options", __config__=_MODEL_CONFIG, **kept)  # type: ignore[call-overload]
    except Exception:  # an annotation pydantic cannot validate: check names only
        loose = {name: (Any, default) for name, (_, default) in kept.items()}
        return create_model(f"{cls.__name__}Options", __config__=_MODEL_CONFIG, **loose)  # type: ignore[call-overload]


def option_problems(cls: type, options: JSONReadObject, supplied: Iterable[str] = ()) -> list[str]:
    """``field: message`` lines for options ``cls`` would reject (unknown names, wrong types,
    missing required options)."""
    model = options_model(cls, frozenset(supplied))
    if model is None:
        return []
    try:
        model.model_validate(dict(options))
    except ValidationError as exc:
        known = ", ".join(sorted(model.model_fields)) or "none"
        lines = []
        for err in exc.errors():
            loc = ".".join(str(part) for part in err["loc"]) or "<options>"
            if err["type"] == "extra_forbidden":
                lines.append(f"{loc}: unknown option (options: {known})")
            else:
                lines.append(f"{loc}: {err['msg']}")
        return lines
    return []


def as_provider_spec(value: ProviderSpec | JSONReadValue) -> ProviderSpec | str:
    """``value`` as a ProviderSpec, or why it is not one."""
    if isinstance(value, ProviderSpec):
        return value
    if isinstance(value, str):
        return ProviderSpec(provider=value)
    if not isinstance(value, Mapping):
        return f"expected a provider name or a mapping with 'provider', got {value!r}"
    if not isinstance(value.get("provider"), str):
        return "provider: missing (give {provider: NAME, ...options})"
    return ProviderSpec.model_validate(dict(value))


def provider_problems(kind: str, value: ProviderSpec | JSONReadValue) -> list[str]:
    """Problems of a ``kind`` provider spec: unknown provider name, options its constructor
    rejects, or the reason it cannot run here (missing package, weights, key variable)."""
    spec = as_provider_spec(value)
    if isinstance(spec, str):
        return [spec]
    try:
        cls = lookup(kind, spec.provider)
    except UnknownComponent:
        known = ", ".join(names(kind)) or "none"
        return [f"provider: unknown {kind} provider {spec.provider!r}; known: {known}"]
    problems = option_problems(cls, spec.options())
    if problems:
        return [f"{kind} provider {spec.provider!r}: {line}" for line in problems]
    try:
        avail = availability(kind, spec)
    except TypeError as exc:
        return [f"{kind} provider {spec.provider!r}: bad options ({exc})"]
    if not avail.available:
        return [f"{kind} provider {spec.provider!r} cannot run here: {avail.reason}"]
    return []
