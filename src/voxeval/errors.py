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


class EndpointError(VoxevalError):
    """A remote endpoint refused a request or kept failing after retries; names the endpoint,
    the HTTP status (when there is one) and the server's message."""


class LLMOutputError(VoxevalError):
    """A model's reply could not be used (not JSON, or not matching the response schema)
    after the configured number of attempts; ``raw_text`` holds the last reply."""

    def __init__(self, message: str, *, raw_text: str = "", attempts: int = 0) -> None:
        super().__init__(message)
        self.raw_text = raw_text
        self.attempts = attempts
