"""The agent definition of an EVA-Bench release (``configs/agents/<domain>_agent.yaml``).

It holds ``role``, ``instructions`` (the policy), ``tool_module_path`` (the Python module whose
functions implement the tools, one function per tool id) and ``tools``: each with ``id``/
``name``, ``description``, ``tool_type`` (read/write) and ``required_parameters`` /
``optional_parameters`` (name, type, description, enum, items). Parameter types use Python
names, including ``float``; they become JSON schema here (``float`` -> ``number``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from voxeval.config import load_yaml
from voxeval.errors import ConfigError
from voxeval.json_types import JSONObject, JSONReadValue, JSONValue

# Python type names the release uses -> JSON schema types
_TYPES = {
    "float": "number",
    "double": "number",
    "number": "number",
    "int": "integer",
    "integer": "integer",
    "str": "string",
    "string": "string",
    "bool": "boolean",
    "boolean": "boolean",
    "list": "array",
    "array": "array",
    "dict": "object",
    "object": "object",
}
_KINDS = {"read": "read", "write": "write", "auth": "auth", "system": "system"}
_SCHEMA_KEYS = ("description", "enum", "default", "minimum", "maximum", "format")


@dataclass
class EvaAgentConfig:
    path: Path
    role: str
    instructions: str
    tool_module_path: str
    # tool declarations (voxeval tools.yaml form, without steps or python hook yet)
    tools: list[JSONObject] = field(default_factory=list)
    greeting: str = ""  # from the release's initial_messages.yaml for the chosen language

    def tool_names(self) -> list[str]:
        return [str(t["name"]) for t in self.tools]


def json_schema_type(value: JSONReadValue, where: str) -> str:
    """The JSON schema type for a release's parameter type (``float`` -> ``number``)."""
    name = str(value).strip().lower()
    if name not in _TYPES:
        raise ConfigError(f"{where}: unknown parameter type {value!r} (known: {sorted(_TYPES)})")
    return _TYPES[name]


def _property(param: JSONObject, where: str) -> JSONObject:
    schema: JSONObject = {"type": json_schema_type(param.get("type", "string"), where)}
    schema.update({k: param[k] for k in _SCHEMA_KEYS if k in param})
    items = param.get("items")
    if isinstance(items, dict):
        schema["items"] = _property(items, f"{where}.items")
    elif schema["type"] == "array":
        schema["items"] = {}
    return schema


def tool_declaration(tool: JSONObject, where: str) -> JSONObject:
    """A voxeval tool declaration (name, description, kind, parameters) for one release tool."""
    name = tool.get("id") or tool.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{where}: field 'id' is missing")
    # other tool types (transfers, ...) are system tools: neither lookups nor writes
    kind = _KINDS.get(str(tool.get("tool_type", "read")).lower(), "system")
    properties: JSONObject = {}
    required: list[JSONValue] = []
    for group in ("required_parameters", "optional_parameters"):
        params = tool.get(group) or []
        if not isinstance(params, list):
            raise ConfigError(f"{where}: {group}: expected a list of parameters")
        for n, param in enumerate(params):
            label = f"{where}: {group}.{n}"
            if not isinstance(param, dict) or not isinstance(param.get("name"), str):
                raise ConfigError(f"{label}: expected a mapping with a 'name'")
            param_name = str(param["name"])
            properties[param_name] = _property(param, f"{label}.type")
            if group == "required_parameters":
                required.append(param_name)
    parameters: JSONObject = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    return {
        "name": name,
        "description": str(tool.get("description", "")),
        "kind": kind,
        "parameters": parameters,
    }


def load_eva_agent_config(path: Path) -> EvaAgentConfig:
    if not path.exists():
        raise ConfigError(f"{path}: agent configuration not found")
    data = load_yaml(path)
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected one agent mapping at the top level")
    tools = data.get("tools") or []
    if not isinstance(tools, list):
        raise ConfigError(f"{path}: tools: expected a list")
    declarations = [
        tool_declaration(t if isinstance(t, dict) else {}, f"{path}: tools.{n}")
        for n, t in enumerate(tools)
    ]
    return EvaAgentConfig(
        path=path,
        role=str(data.get("role") or data.get("name") or "voice agent"),
        instructions=str(data.get("instructions") or ""),
        tool_module_path=str(data.get("tool_module_path") or ""),
        tools=declarations,
    )
