"""voxeval: evaluate voice AI systems offline-first.

The Python API (``voxeval.evaluate``), imported on first use so that ``import voxeval`` stays
light:

    from voxeval import load_config, run_evaluation
    result = run_evaluation(load_config("run.yaml"), "runs/mine")

Extension points (protocols, systems, metrics, providers) are in ``voxeval.api``.
"""

from __future__ import annotations

import importlib
from typing import Any

from voxeval.errors import (
    AudioError,
    ConfigError,
    ProviderUnavailable,
    UnknownComponent,
    VoxevalError,
)

__version__ = "0.1.0"

# name -> module that defines it, imported when the name is first used
_LAZY = {
    "EvaluationResult": "voxeval.evaluate",
    "load_config": "voxeval.evaluate",
    "rescore": "voxeval.evaluate",
    "run_evaluation": "voxeval.evaluate",
    "validate": "voxeval.evaluate",
    "RunConfig": "voxeval.config",
}

__all__ = [
    "AudioError",
    "ConfigError",
    "EvaluationResult",
    "ProviderUnavailable",
    "RunConfig",
    "UnknownComponent",
    "VoxevalError",
    "__version__",
    "load_config",
    "rescore",
    "run_evaluation",
    "validate",
]


def __getattr__(name: str) -> Any:
    """PEP 562: the names of ``_LAZY``, imported on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'voxeval' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
