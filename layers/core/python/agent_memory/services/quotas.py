"""Quotas: how much one tenant may ask of the service, from its policy (docs/policy.md, "Quotas").

Two kinds, both answered with 429 `rate_limited`, the limit named (`reason`, the policy key in
`field`, its value in `limit`) and a `Retry-After`:

- a rate: requests per second per tenant, a token bucket in this process (one Lambda execution
  environment, or `memory serve`), so a tenant's burst cannot take every thread or connection;
- storage: live memories per subject (counted exactly, in the database, before each write) and
  memories and bytes per tenant (counted against a figure at most `USAGE_SECONDS` old, so a write
  does not scan the tenant's rows).

A live memory is one that holds content and can still be served or reviewed: active, pending
approval, contested, quarantined. Superseded, expired, deleted and rejected records do not count.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from agent_memory.domain.errors import RateLimited
from agent_memory.domain.policy import PolicyProfile
from agent_memory.ports.store import MemoryStore, TenantSession
from agent_memory.services.policies import PolicyRegistry

USAGE_SECONDS = 5.0
# What a storage refusal tells a client: space frees when memories expire or are deleted, which no
# retry within seconds will see.
STORAGE_RETRY_AFTER_S = 60


@dataclass(frozen=True)
class Addition:
    """What a write would add for one subject: memories and bytes of content."""

    memories: int
    bytes: int


class _Bucket:
    __slots__ = ("rate", "stamp", "tokens")

    def __init__(self, rate: int, now: float) -> None:
        self.rate = rate
        self.tokens = float(rate)  # a full second's worth: the burst a tenant may send at once
        self.stamp = now

    def take(self, rate: int, now: float) -> float:
        """0 when a request may go ahead (a token taken), else the seconds until one is free."""
        if rate != self.rate:  # the policy changed: the new rate, from what is left
            self.rate = rate
            self.tokens = min(self.tokens, float(rate))
        self.tokens = min(float(rate), self.tokens + (now - self.stamp) * rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / rate


class Quotas:
    def __init__(
        self, store: MemoryStore, policies: PolicyRegistry, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.store = store
        self.policies = policies
        self.clock = clock
        self._buckets: dict[str, _Bucket] = {}
        self._usage: dict[str, tuple[float, int, int]] = {}
        self._lock = threading.Lock()

    def admit_request(self, tenant_id: str) -> None:
        """Take one of the tenant's requests per second, or refuse with when one is free."""
        rate = self.policies.for_tenant(tenant_id).quota_requests_per_second
        if rate is None:
            return
        now = self.clock()
        with self._lock:
            bucket = self._buckets.get(tenant_id)
            if bucket is None:
                bucket = self._buckets[tenant_id] = _Bucket(rate, now)
            wait = bucket.take(rate, now)
        if wait > 0:
            raise RateLimited(
                f"this tenant may send {rate} requests per second; try again in {math.ceil(wait)} s",
                field="quota_requests_per_second",
                reason="requests_per_second",
                limit=rate,
                retry_after_s=math.ceil(wait),
            )

    def storage_refusals(
        self,
        tenant_id: str,
        policy: PolicyProfile,
        additions: Mapping[str, Addition],
        session: TenantSession | None = None,
    ) -> dict[str | None, RateLimited]:
        """The refusal per subject whose live memories would exceed the policy's quota, and under
        None the tenant's own refusal (memories or bytes) that applies to every subject. Counted in
        `session` when given (the write's own transaction), else in a transaction of its own."""
        refusals: dict[str | None, RateLimited] = {}
        if not additions:
            return refusals
        per_subject = policy.quota_memories_per_subject
        if per_subject is not None:
            if session is not None:
                live = session.live_memory_counts(sorted(additions))
            else:
                with self.store.tenant(tenant_id) as own:
                    live = own.live_memory_counts(sorted(additions))
            for subject, add in additions.items():
                if live.get(subject, 0) + add.memories > per_subject:
                    refusals[subject] = _storage_refusal(
                        f"this subject holds {live.get(subject, 0)} live memories, the policy's quota is"
                        f" {per_subject}; delete or let some expire",
                        "quota_memories_per_subject",
                        "memories_per_subject",
                        per_subject,
                    )
        tenant_refusal = self._tenant_refusal(tenant_id, policy, additions)
        if tenant_refusal is not None:
            refusals[None] = tenant_refusal
        return refusals

    def _tenant_refusal(
        self, tenant_id: str, policy: PolicyProfile, additions: Mapping[str, Addition]
    ) -> RateLimited | None:
        max_memories, max_bytes = policy.quota_memories_per_tenant, policy.quota_bytes_per_tenant
        if max_memories is None and max_bytes is None:
            return None
        memories, size = self._tenant_usage(tenant_id)
        adding = sum(a.memories for a in additions.values())
        if max_memories is not None and memories + adding > max_memories:
            return _storage_refusal(
                f"this tenant holds {memories} live memories, the policy's quota is {max_memories}",
                "quota_memories_per_tenant",
                "memories_per_tenant",
                max_memories,
            )
        if max_bytes is not None and size + sum(a.bytes for a in additions.values()) > max_bytes:
            return _storage_refusal(
                f"this tenant holds {size} bytes of memory content, the policy's quota is {max_bytes}",
                "quota_bytes_per_tenant",
                "bytes_per_tenant",
                max_bytes,
            )
        return None

    def _tenant_usage(self, tenant_id: str) -> tuple[int, int]:
        now = self.clock()
        with self._lock:
            hit = self._usage.get(tenant_id)
        if hit is not None and now - hit[0] < USAGE_SECONDS:
            return hit[1], hit[2]
        with self.store.tenant(tenant_id) as session:
            memories, size = session.live_memory_usage()
        with self._lock:
            self._usage[tenant_id] = (now, memories, size)
        return memories, size

    def charged(self, tenant_id: str, additions: Mapping[str, Addition]) -> None:
        """Count what was just written against the cached tenant figure, so a burst of writes
        within `USAGE_SECONDS` cannot all pass on one stale reading."""
        with self._lock:
            hit = self._usage.get(tenant_id)
            if hit is not None:
                self._usage[tenant_id] = (
                    hit[0],
                    hit[1] + sum(a.memories for a in additions.values()),
                    hit[2] + sum(a.bytes for a in additions.values()),
                )


def _storage_refusal(message: str, field: str, reason: str, limit: int) -> RateLimited:
    return RateLimited(message, field=field, reason=reason, limit=limit, retry_after_s=STORAGE_RETRY_AFTER_S)
