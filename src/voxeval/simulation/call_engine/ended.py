"""How a running call ends: the signal that stops the engine's loop, and which failures are
never the agent's fault."""

from __future__ import annotations

from voxeval.errors import ConfigError, HarnessFault, ProviderUnavailable, SystemFault


class CallEnded(Exception):
    """The call is over at ``t`` seconds for ``reason`` (``fault``: the agent failed)."""

    def __init__(
        self, reason: str, t: float, error: str | None = None, fault: SystemFault | None = None
    ) -> None:
        super().__init__(reason)
        self.reason, self.t, self.error, self.fault = reason, t, error, fault
        if fault is not None and error is None:
            self.error = str(fault)


# Raised by the agent yet not its fault: our side, or a setup problem (missing key or model).
NOT_AGENT_FAULTS = (HarnessFault, ConfigError, ProviderUnavailable)
