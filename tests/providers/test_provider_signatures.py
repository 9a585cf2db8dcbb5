"""The providers package keeps ``Any`` out of most signatures (issue 41): the count of its
functions whose signature mentions ``Any`` (or ``object``) only moves down. Left on purpose:
pass-through wrappers (``__getattr__`` proxies, the metering wrappers' ``*args/**kwargs``)
and raw JSON replies still read with ``dict[str, Any]``."""

from __future__ import annotations

from tests.test_signature_types import SOURCE, signature_counts

CEILING = 38


def test_providers_signatures_mention_any_at_most_the_ceiling() -> None:
    with_any, total = signature_counts(SOURCE / "providers")
    assert total > 400  # the whole package was counted
    assert with_any <= CEILING, f"{with_any} of {total} provider signatures mention Any"
