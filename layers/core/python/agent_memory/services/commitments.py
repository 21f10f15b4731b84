"""Closing a commitment (docs/rules.md, Types: commitments are stateful, kept until closed + 30 d).

The record keeps its id, content and version: its state moves from open to closed, it gains an
expiry (the close plus the tenant's retention), and the change is an audited event.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from agent_memory.domain.commitments import CommitmentOutcome, close
from agent_memory.domain.enums import EventType, MemoryType, Role, Status
from agent_memory.domain.errors import Conflict, InvalidRequest, NotFound
from agent_memory.domain.records import MemoryRecord, Principal, utcnow
from agent_memory.ports.store import MemoryStore, NewEvent
from agent_memory.services.authorization import require_mutation, visible
from agent_memory.services.policies import PolicyRegistry


class CommitmentService:
    def __init__(
        self, store: MemoryStore, policies: PolicyRegistry, clock: Callable[[], datetime] = utcnow
    ) -> None:
        self.store = store
        self.policies = policies
        self.clock = clock

    def close(
        self,
        principal: Principal,
        memory_id: str,
        *,
        outcome: CommitmentOutcome,
        closed_at: datetime | None = None,
        note: str | None = None,
    ) -> MemoryRecord:
        """Mark an active commitment closed (done or cancelled). `closed_at` defaults to now and lies
        between the commitment's effective date and now; closing twice is a conflict, not a silent
        success. The note is not stored (it could carry identifiers): the event says one was given."""
        require_mutation(principal, Role.AGENT, Role.INTEGRATION, action="close commitments")
        now = self.clock()
        at = closed_at or now
        if at > now:
            raise InvalidRequest("closed_at may not be in the future", field="closed_at")
        policy = self.policies.for_tenant(principal.tenant_id)
        with self.store.tenant(principal.tenant_id) as s:
            record = visible(principal, s.get_record(memory_id, for_update=True))
            if record is None:  # above the caller's clearance looks the same as absent
                raise NotFound(f"memory {memory_id} not found")
            if record.type is not MemoryType.COMMITMENT:
                raise Conflict(f"memory {memory_id} is a {record.type.value}, not a commitment")
            if record.status is not Status.ACTIVE:
                raise Conflict(
                    f"memory {memory_id} is {record.status.value}; only an active commitment closes"
                )
            if at < record.effective_at:
                raise InvalidRequest("closed_at may not be before the commitment was made", field="closed_at")
            value, expires_at = close(
                record.value,
                outcome=outcome,
                at=at,
                by=principal.sub,
                policy=policy,
                requested_expiry=record.expires_at,
            )
            closed = s.update_status(record.id, Status.ACTIVE.value, value=value, expires_at=expires_at)
            s.append_events(
                [
                    NewEvent(
                        EventType.UPDATED.value,
                        principal.sub,
                        record.id,
                        record.subject_id,
                        "commitment_closed",
                        {
                            "outcome": outcome.value,
                            "closed_at": at.isoformat(),
                            "expires_at": expires_at.isoformat(),
                            "note_present": bool(note),
                        },
                    )
                ]
            )
        return closed
