"""An in-memory sliding-window limiter (per rater or per client address) for requests that
are not answers; answers are limited from the database, which survives restarts."""

from __future__ import annotations

import threading
import time
from collections import deque


class SlidingWindow:
    def __init__(self, limit: int, window_s: float = 60.0) -> None:
        self.limit = limit
        self.window_s = window_s
        self._hits: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def allow(self, key: str) -> bool:
        """Count one request for ``key``; False when it is over the limit."""
        return self._hit(key, count=True)

    def blocked(self, key: str) -> bool:
        """Whether ``key`` is at its limit, without counting a request."""
        return not self._hit(key, count=False)

    def record(self, key: str) -> None:
        """Count one event for ``key`` (e.g. a failed log-in) whatever the limit."""
        with self._lock:
            self._hits.setdefault(key, deque()).append(time.monotonic())

    def _hit(self, key: str, *, count: bool) -> bool:
        now = time.monotonic()
        with self._lock:
            hits = self._hits.setdefault(key, deque())
            while hits and hits[0] <= now - self.window_s:
                hits.popleft()
            if len(hits) >= self.limit:
                return False
            if not count:
                return True
            hits.append(now)
            if len(self._hits) > 10000:  # forget idle keys so memory stays bounded
                for stale in [k for k, v in self._hits.items() if not v]:
                    del self._hits[stale]
            return True
