"""Flagging records due for revalidation by age: the nightly run walks every active record, and a
read flags what came due since the last run (a record past its age between two nightly runs is
shown, and audited, as due at once, not the next morning). One rule (`domain/revalidation`), one
flagging statement, one audit event for both."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from agent_memory.domain.enums import EventType, MemoryType
from agent_memory.domain.policy import PolicyProfile
from agent_memory.domain.revalidation import revalidation_cutoffs, revalidation_due
from agent_memory.ports.rows import RevalidationFlag
from agent_memory.ports.store import NewEvent, TenantSession

# Who flags a record that came due by age: the service's lifecycle, whichever run or read saw it.
LIFECYCLE_ACTOR = "lifecycle"


def due_arguments(policy: PolicyProfile, now: datetime) -> tuple[dict[str, datetime], list[str]]:
    """The store's view of the revalidation rule: per type its cutoff, and the slots not aged."""
    cutoffs = {t.value: at for t, at in revalidation_cutoffs(policy, now).items()}
    return cutoffs, sorted(policy.sor_slot_fields)


def due_events(rows: Sequence[RevalidationFlag], policy: PolicyProfile) -> list[NewEvent]:
    """One `memory_revalidation_due` event per flagged record (ids and ages, never content)."""
    ages = policy.revalidate_after_days
    return [
        NewEvent(
            EventType.REVALIDATION_DUE.value,
            LIFECYCLE_ACTOR,
            r["id"],
            r["subject_id"],
            "revalidation_age_reached",
            {"type": r["type"], "revalidate_after_days": ages[MemoryType(r["type"])]},
        )
        for r in rows
    ]


def possibly_due(
    records: Iterable[tuple[str, MemoryType, str | None, datetime]], policy: PolicyProfile, now: datetime
) -> list[tuple[str, MemoryType, str | None, datetime]]:
    """The records ((id, type, slot, effective_at)) old enough by their effective date to be due:
    the age never starts earlier, so the others are not due whatever their last confirmation."""
    return [r for r in records if revalidation_due(r[1], r[2], r[3], None, policy, now)]


def flag_due_at_read(
    session: TenantSession,
    records: Iterable[tuple[str, MemoryType, str | None, datetime]],
    policy: PolicyProfile,
    now: datetime,
) -> set[str]:
    """Of the active, unflagged records a read found ((id, type, slot, effective_at)), flag the ones
    past their revalidation age now, each audited; returns their ids. Only records old enough by
    their effective date are asked about (the age never starts earlier), so a read of records that
    are not due costs no statement; the store applies the whole rule, last confirmation included."""
    maybe = sorted({r[0] for r in possibly_due(records, policy, now)})
    if not maybe:
        return set()
    cutoffs, sor_slots = due_arguments(policy, now)
    rows = session.flag_revalidation_batch(cutoffs, sor_slots, len(maybe), ids=maybe)
    if rows:
        session.append_events(due_events(rows, policy))
    return {r["id"] for r in rows}
