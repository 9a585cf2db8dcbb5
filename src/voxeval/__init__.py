"""voxeval: evaluate voice AI systems offline-first."""

from voxeval.errors import (
    AudioError,
    ConfigError,
    ProviderUnavailable,
    UnknownComponent,
    VoxevalError,
)

__version__ = "0.1.0"

__all__ = [
    "AudioError",
    "ConfigError",
    "ProviderUnavailable",
    "UnknownComponent",
    "VoxevalError",
    "__version__",
]
