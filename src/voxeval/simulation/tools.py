"""Declarative tools over the scenario database (see ``tool_spec``, ``tool_ops``,
``tool_runtime`` and ``tool_expr``); this module is the public entry point."""

from voxeval.simulation.tool_expr import ExpressionError, evaluate, render
from voxeval.simulation.tool_ops import ToolContext, ToolFailure
from voxeval.simulation.tool_runtime import ToolRuntime, resolve_scenario_tools
from voxeval.simulation.tool_spec import ToolSpec, load_tool_specs, parse_tool_specs

__all__ = [
    "ExpressionError",
    "ToolContext",
    "ToolFailure",
    "ToolRuntime",
    "ToolSpec",
    "evaluate",
    "load_tool_specs",
    "parse_tool_specs",
    "render",
    "resolve_scenario_tools",
]
