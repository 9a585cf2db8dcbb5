"""Declarative tools over the scenario database (see ``tool_spec``, ``tool_ops``,
``tool_runtime`` and ``tool_expr``); this module is the public entry point."""

from voxeval.benchmarks.tools.tool_expr import ExpressionError, evaluate, render
from voxeval.benchmarks.tools.tool_ops import ToolContext, ToolFailure
from voxeval.benchmarks.tools.tool_runtime import ToolRuntime, resolve_scenario_tools
from voxeval.benchmarks.tools.tool_spec import ToolSpec, load_tool_specs, parse_tool_specs

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
