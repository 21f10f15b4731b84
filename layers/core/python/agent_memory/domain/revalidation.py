"""Revalidation by age (docs/rules.md, Types: facts revalidate after 180 days, preferences after 365).

A record's age counts from the later of its effective date and its last confirmation
(`last_validated_at`). Past the policy's age for its type it is due: flagged
`needs_revalidation` until someone confirms it (the same flag a contradiction with the system of
record sets; the audit event says which). Pure: the write gateway, the nightly run and the
revalidate route feed it what they know.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from agent_memory.domain.enums import MemoryType
from agent_memory.domain.policy import PolicyProfile


def revalidation_anchor(effective_at: datetime, last_validated_at: datetime | None) -> datetime:
    """When the record's age starts: the later of when it held and when it was last confirmed."""
    if last_validated_at is None:
        return effective_at
    return max(effective_at, last_validated_at)


def revalidation_due(
    memory_type: MemoryType,
    slot: str | None,
    effective_at: datetime,
    last_validated_at: datetime | None,
    policy: PolicyProfile,
    now: datetime,
) -> bool:
    """True when the record is at least the policy's revalidation age for its type. A slot the
    system of record owns is not aged: retrieval checks it against the live value every time."""
    days = policy.revalidate_after_days.get(memory_type)
    if days is None or (slot is not None and slot in policy.sor_slot_fields):
        return False
    return revalidation_anchor(effective_at, last_validated_at) + timedelta(days=days) <= now


def revalidation_cutoffs(policy: PolicyProfile, now: datetime) -> dict[MemoryType, datetime]:
    """Per type, the anchor at or before which a record is due now (the nightly run's query)."""
    return {t: now - timedelta(days=d) for t, d in sorted(policy.revalidate_after_days.items())}
