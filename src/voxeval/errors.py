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
    the HTTP status (when there is one) and the server's message.

    ``failure`` says what went wrong last: ``http`` (an error status), ``timeout``,
    ``connection``, ``malformed`` (a reply that could not be used) or None when unknown;
    ``attempts`` counts the requests sent."""

    def __init__(
        self,
        message: str,
        *,
        endpoint: str | None = None,
        status: int | None = None,
        attempts: int | None = None,
        failure: str | None = None,
    ) -> None:
        super().__init__(message)
        self.endpoint = endpoint
        self.status = status
        self.attempts = attempts
        self.failure = failure


class LLMOutputError(VoxevalError):
    """A model's reply could not be used (not JSON, or not matching the response schema)
    after the configured number of attempts; ``raw_text`` holds the last reply."""

    def __init__(self, message: str, *, raw_text: str = "", attempts: int = 0) -> None:
        super().__init__(message)
        self.raw_text = raw_text
        self.attempts = attempts


# Causes of a fault of the system under test (``SystemFault.cause``).
SYSTEM_FAULT_CAUSES = ("exception", "timeout", "malformed_output", "disconnect", "no_audio")


class SystemFault(VoxevalError):
    """The system under test failed: it raised, timed out, disconnected, or answered with
    output that cannot be used. This is a *result* of the evaluation (the unit is scored as a
    failure), never a reason to leave the unit out. ``cause`` is one of
    ``SYSTEM_FAULT_CAUSES``."""

    def __init__(self, message: str, *, cause: str = "exception") -> None:
        super().__init__(message)
        if cause not in SYSTEM_FAULT_CAUSES:
            raise ValueError(f"unknown system fault cause {cause!r}")
        self.cause = cause


class HarnessFault(VoxevalError):
    """A fault on voxeval's own side (user simulator, renderer, scoring ASR, judge, network to
    a judge). It is retried; when it persists the unit is reported as failed with this cause
    and excluded from the scores with a visible warning. ``component`` names the part at
    fault (``simulator``, ``renderer``, ``judge``, ``scoring``, ...). ``retryable=False``
    marks a fault another try cannot cure (e.g. every deterministic regeneration of a call
    already failed validation): the unit fails at once."""

    def __init__(self, message: str, *, component: str = "harness", retryable: bool = True) -> None:
        super().__init__(message)
        self.component = component
        self.retryable = retryable


def _exception_chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from (``__cause__``/``__context__``)."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _is_timeout(exc: BaseException) -> bool:
    import httpx

    return isinstance(exc, TimeoutError | httpx.TimeoutException)


def _is_disconnect(exc: BaseException) -> bool:
    import httpx

    if isinstance(exc, ConnectionError | EOFError | httpx.TransportError):
        return True
    # websockets' ConnectionClosed* (matched by name: the package is optional here)
    return any(cls.__name__.startswith("ConnectionClosed") for cls in type(exc).__mro__)


def _is_malformed(exc: BaseException) -> bool:
    import binascii
    import json

    return isinstance(
        exc,
        AudioError | LLMOutputError | json.JSONDecodeError | UnicodeDecodeError | binascii.Error,
    )


def classify_system_fault(exc: BaseException, where: str = "") -> SystemFault:
    """The ``SystemFault`` for an exception raised by the system under test: a ``SystemFault``
    is kept; otherwise the exception and the ones it was raised from decide the cause
    (timeout, then disconnect, then malformed output, else ``exception``). ``where`` prefixes
    the message (e.g. ``"system 'x'"``)."""
    if isinstance(exc, SystemFault):
        return exc
    chain = _exception_chain(exc)
    cause = "exception"
    for test, name in (
        (_is_timeout, "timeout"),
        (_is_disconnect, "disconnect"),
        (_is_malformed, "malformed_output"),
    ):
        if any(test(e) for e in chain):
            cause = name
            break
    text = str(exc) if isinstance(exc, VoxevalError) else f"{type(exc).__name__}: {exc}"
    message = f"{where}: {text}" if where and not text.startswith(where) else text
    return SystemFault(message, cause=cause)
