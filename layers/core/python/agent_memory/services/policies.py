"""Which policy profile a tenant runs under: stored per tenant, default from settings.

Cached for a short while so the write and read paths do not pay a query for it.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from agent_memory.domain.policy import PolicyProfile, profile
from agent_memory.ports.store import MemoryStore

CACHE_SECONDS = 30.0


class PolicyRegistry:
    def __init__(self, store: MemoryStore, default_profile: str) -> None:
        self.store = store
        self.default = profile(default_profile)
        self._cache: dict[str, tuple[float, PolicyProfile]] = {}
        self._lock = threading.Lock()

    def for_tenant(self, tenant_id: str) -> PolicyProfile:
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(tenant_id)
        if hit and now - hit[0] < CACHE_SECONDS:
            return hit[1]
        with self.store.tenant(tenant_id) as session:
            stored = session.tenant_policy()
        resolved = self.default if stored is None else _resolve(*stored)
        with self._lock:
            self._cache[tenant_id] = (now, resolved)
        return resolved

    def set(
        self, tenant_id: str, profile_name: str, overrides: dict[str, Any] | None = None
    ) -> PolicyProfile:
        resolved = _resolve(profile_name, overrides or {})  # validates before storing
        with self.store.tenant(tenant_id) as session:
            session.set_tenant_policy(profile_name, overrides or {})
        with self._lock:
            self._cache[tenant_id] = (time.monotonic(), resolved)
        return resolved


def _resolve(name: str, overrides: dict[str, Any]) -> PolicyProfile:
    base = profile(name)
    return base.with_overrides(overrides) if overrides else base
