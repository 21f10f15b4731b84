"""A small TTL cache shared by the system-of-record adapters (docs/rules.md: at most 5 minutes)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

MAX_TTL_SECONDS = 300.0


class TtlCache[K, V]:
    def __init__(self, ttl_seconds: float, max_entries: int = 10_000) -> None:
        if not 0 <= ttl_seconds <= MAX_TTL_SECONDS:
            raise ValueError(f"system-of-record cache ttl must be within 0..{MAX_TTL_SECONDS:.0f} s")
        self.ttl = ttl_seconds
        self.max_entries = max_entries
        self._data: dict[K, tuple[float, V]] = {}
        self._lock = threading.Lock()
        self._generation = 0  # moves on every invalidation

    def get_or_load(self, key: K, load: Callable[[], V]) -> V:
        now = time.monotonic()
        with self._lock:
            hit = self._data.get(key)
            if hit and now - hit[0] < self.ttl:
                return hit[1]
            generation = self._generation
        value = load()
        with self._lock:
            # A load that an invalidation overtook (an erasure, a `memory sor set`) may hold what
            # was just dropped: it answers this call but is not kept.
            current = self._data.get(key)
            # ... nor one that a later-started load of the same key already replaced
            if generation == self._generation and (current is None or current[0] <= now):
                if len(self._data) >= self.max_entries:
                    self._data.clear()
                self._data[key] = (now, value)
        return value

    def invalidate(self, predicate: Callable[[K], bool]) -> int:
        with self._lock:
            self._generation += 1
            doomed = [k for k in self._data if predicate(k)]
            for k in doomed:
                del self._data[k]
        return len(doomed)

    def __len__(self) -> int:
        return len(self._data)
