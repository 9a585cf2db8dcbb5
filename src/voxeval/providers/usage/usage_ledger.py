"""Who sent which HTTP requests: usage attributed to a component (the judge, the scoring ASR,
an agent, the simulated caller) while one unit runs on one thread.

``count_requests`` sees every request of a block; a shared provider's ``stats`` every request
of the run. Neither tells a unit how many requests *its* judge calls cost when the judge
failed half-way, so protocols open a ``usage_ledger()`` around a unit's work and wrap the
shared providers in ``AttributedProvider``: each call of a wrapped method is one logical
call, and the requests, retries and timeouts it sent (cache hits send none) are added to the
component's entry of every ledger open on the thread, whether the call returned or raised.

Inside, the metered providers (``usage_meter``) break a component's usage down by model
(kind, provider, model): tokens, audio tokens and seconds of audio in and out, which a price
table turns into costs. A metered call goes to the innermost attributed block on the thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

from voxeval.providers.base import ChatResponse, Provider, Usage
from voxeval.providers.http.openai_http import RequestCounts, count_requests
from voxeval.providers.usage import usage_meter
from voxeval.providers.usage.thread_stack import ThreadStack
from voxeval.providers.usage.usage_meter import CallCounts, ModelKey, ModelUsage

CallParams = ParamSpec("CallParams")
T = TypeVar("T")


@dataclass
class ComponentUsage(CallCounts):
    """What one component cost inside a ledger: logical calls, HTTP counts, tokens, cost."""

    cost_usd: float | None = None
    # by (kind, provider, model): what the component's metered model calls consumed
    models: dict[ModelKey, ModelUsage] = field(default_factory=dict)
    # the component an ``attributed`` block counts for ("" in a ledger's entries)
    component: str = field(default="", compare=False, repr=False)

    @property
    def audio_in_s(self) -> float:
        return sum(use.audio_in_s for use in self.models.values())

    @property
    def audio_out_s(self) -> float:
        return sum(use.audio_out_s for use in self.models.values())

    @property
    def prompt_audio_tokens(self) -> int:
        return sum(use.prompt_audio_tokens for use in self.models.values())

    @property
    def completion_audio_tokens(self) -> int:
        return sum(use.completion_audio_tokens for use in self.models.values())

    def add_model_usage(self, key: ModelKey, use: ModelUsage) -> None:
        self.models.setdefault(key, ModelUsage()).add(use)

    def add_requests(self, tally: RequestCounts) -> None:
        self.requests += int(tally.requests)
        self.retries += int(tally.retries)
        self.timeouts += int(tally.timeouts)

    def add_tokens(self, usage: Usage | None) -> None:
        """Tokens and cost from a provider result's ``usage`` (if it has one)."""
        if usage is None:
            return
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        if usage.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + usage.cost_usd


Ledger = dict[str, ComponentUsage]
_ledgers: ThreadStack[Ledger] = ThreadStack()
_open_calls: ThreadStack[ComponentUsage] = ThreadStack()
UNATTRIBUTED = "unattributed"  # metered calls made in a ledger outside any attributed block


def _metered_sink(key: ModelKey, use: ModelUsage) -> None:
    calls = _open_calls.items()
    if calls:
        calls[-1].add_model_usage(key, use)
        return
    for ledger in _ledgers.items():
        ledger.setdefault(UNATTRIBUTED, ComponentUsage()).add_model_usage(key, use)


usage_meter.connect(_metered_sink, lambda: bool(_ledgers.items()))


def usage_ledger() -> AbstractContextManager[Ledger]:
    """Collect, per component, the usage of attributed calls made on this thread inside."""
    return _ledgers.opened({})


@contextmanager
def attributed(component: str, *, calls: int = 1) -> Iterator[ComponentUsage]:
    """``calls`` logical calls of ``component`` (0 for setup, e.g. a warm-up): the requests
    sent inside the block (and the tokens the block adds to the yielded entry) go to every
    open ledger, also when it raises."""
    call = ComponentUsage(calls=calls, component=component)
    with count_requests() as tally, _open_calls.opened(call):
        try:
            yield call
        finally:
            call.add_requests(tally)
            for ledger in _ledgers.items():
                entry = ledger.setdefault(component, ComponentUsage())
                entry.calls += call.calls
                entry.requests += call.requests
                entry.retries += call.retries
                entry.timeouts += call.timeouts
                entry.prompt_tokens += call.prompt_tokens
                entry.completion_tokens += call.completion_tokens
                if call.cost_usd is not None:
                    entry.cost_usd = (entry.cost_usd or 0.0) + call.cost_usd
                for key, use in call.models.items():
                    entry.add_model_usage(key, use)


def current_component() -> str:
    """The component of the innermost ``attributed`` block open in this context, or
    ``UNATTRIBUTED`` (a worker names the requests it reports as sent with it)."""
    calls = _open_calls.items()
    return calls[-1].component if calls else UNATTRIBUTED


class AttributedProvider:
    """``inner`` with each call of ``methods`` attributed to ``component`` (tokens and cost
    read from the result's ``usage`` when it has one); everything else is ``inner``'s."""

    def __init__(self, inner: Any, component: str, methods: Iterable[str]) -> None:
        self._inner = inner
        self._component = component
        self._methods = frozenset(methods)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if name in self._methods and callable(value):
            return self._counted(value)
        return value

    def _counted(self, method: Callable[CallParams, T]) -> Callable[CallParams, T]:
        def call(*args: CallParams.args, **kwargs: CallParams.kwargs) -> T:
            with attributed(self._component) as usage:
                result = method(*args, **kwargs)
                # only a chat answer reports tokens (``ChatResponse.usage``)
                usage.add_tokens(result.usage if isinstance(result, ChatResponse) else None)
                return result

        return call


def sends_requests(provider: Provider) -> bool:
    """Is ``provider`` remote (an HTTP endpoint keeping request ``stats``)?"""
    return provider.stats() is not None
