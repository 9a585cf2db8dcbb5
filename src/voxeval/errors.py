"""Exception types. Every message names the file/field/component at fault."""


class VoxevalError(Exception):
    """Base class for errors voxeval raises on purpose (shown to users without a traceback)."""


class AudioError(VoxevalError):
    """Audio that cannot be used: unreadable, empty, non-finite, wrong shape or length."""


class ConfigError(VoxevalError):
    """A config, suite or data file is invalid; the message names the file and field."""


class ProviderUnavailable(VoxevalError):
    """A model/provider cannot run here (missing package, weights, endpoint); says why."""


class UnknownComponent(VoxevalError):
    """A name that is not in the registry for its kind; the message lists known names."""
