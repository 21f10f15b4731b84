"""Forgetting one memory on request (the product requirements: customers view, correct and delete what is
remembered about them; the deletion is auditable).

In one transaction, for the record and every older version of its slot that led to it (its
lineage): the content, value, vector, sentence vectors, full-text entry and cached replies go; the
row stays without content (status `deleted`), so the version chain keeps its place; a tombstone of
its content hash and lineage keys refuses the same memory coming back from a write or a replayed
session; and a `memory_deleted` event says who, when and why (an older version's names the one
asked for, `version_of`). The deletion registry outside the database records the memory's id (a
restore replays it: services/deletion_replay.py); when it cannot be written nothing is deleted.

A correction is not a deletion: the customer's new value is a new version of the slot, written
through the gateway, which supersedes the old one (the old one stays in the history).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_memory.domain.deletion_registry import MEMORY_DELETION
from agent_memory.domain.enums import EventType, Role, Status
from agent_memory.domain.errors import Conflict, NotFound
from agent_memory.domain.records import MemoryRecord, Principal, utcnow
from agent_memory.domain.sanitize import MaskedText
from agent_memory.observability import logger
from agent_memory.ports.deletion_registry import DeletionRegistry
from agent_memory.ports.store import MemoryStore, NewEvent, TenantSession
from agent_memory.services.authorization import require_mutation, visible

DELETED_REASON = "deleted_on_request"


class ForgetRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: MaskedText = Field(
        min_length=1, max_length=500, description="why (the customer's request, a ticket reference)"
    )


class ForgetReply(BaseModel):
    id: str
    status: Literal["deleted"] = "deleted"


class ForgetService:
    def __init__(
        self,
        store: MemoryStore,
        clock: Callable[[], datetime] = utcnow,
        registry: DeletionRegistry | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.registry = registry

    def forget(
        self, principal: Principal, memory_id: str, request: ForgetRequest, *, register: bool = True
    ) -> ForgetReply:
        """Delete one memory's content everywhere it is held, with the older versions of its slot
        that led to it (its lineage: a superseded version must not stay readable, exportable or
        reinstatable once the memory is forgotten), keep a content-free entry of each, tombstone
        each, and audit each. 404 above the caller's clearance (as if absent); 409 under a legal
        hold (of the subject or of any version). Deleting a deleted memory again answers the same
        and writes nothing (unless a version before it is still there: it goes then)."""
        require_mutation(principal, Role.AGENT, Role.PRIVACY_OFFICER, action="delete memories")
        with self.store.tenant(principal.tenant_id) as s:
            found = visible(principal, s.get_record(memory_id))
            if found is None:
                raise NotFound(f"memory {memory_id} not found")
            # Exclusive subject lock, as erasure takes: a write of the same content waits for this
            # to commit, then meets the tombstone (writers take the shared lock before checking).
            s.lock_subject_exclusive(found.subject_id)
            record = visible(principal, s.get_record(memory_id, for_update=True))
            if record is None:  # erased (or consolidated above clearance) meanwhile
                raise NotFound(f"memory {memory_id} not found")
            older = [
                r
                for i in s.versions_before(memory_id, record.subject_id, record.slot)
                if (r := s.get_record(i)) is not None
            ]
            targets = [r for r in (record, *older) if r.status is not Status.DELETED]
            if not targets:
                return ForgetReply(id=memory_id)
            if any(r.legal_hold for r in (record, *older)) or s.subject_on_hold(record.subject_id):
                raise Conflict(f"memory {memory_id} is under a legal hold and cannot be deleted")
            now = self.clock()
            roles = sorted(r.value for r in principal.roles if r in (Role.AGENT, Role.PRIVACY_OFFICER))
            folded_total = 0
            for target in targets:
                folded = s.consolidated_into(target.id)
                folded_total += len(folded)
                hashes, lineage = _content_and_lineage(s, target, folded)
                s.forget_records([target.id, *folded], now)
                s.tombstone_memory(
                    memory_id=target.id,
                    subject_id=target.subject_id,
                    memory_type=target.type.value,
                    slot=target.slot,
                    content_hashes=hashes,
                    lineage_keys=lineage,
                )
                payload = {
                    "reason": request.reason,
                    "as": roles,
                    "type": target.type.value,
                    "slot": target.slot,
                    "version": target.version,
                    "status_before": target.status.value,
                    "also_deleted": folded,  # duplicates consolidated into it
                }
                if target.id != memory_id:  # an older version, forgotten with the one asked for
                    payload["version_of"] = memory_id
                s.append_events(
                    [
                        NewEvent(
                            EventType.DELETED.value,
                            principal.sub,
                            target.id,
                            target.subject_id,
                            DELETED_REASON,
                            payload,
                        )
                    ]
                )
            # Inside the transaction, last: when the registry outside the database cannot be
            # written, the deletion rolls back and the caller is told (a restore must not undo it).
            # Written and then not committed, a restore's replay deletes it: the caller asked.
            if register and self.registry is not None:
                self.registry.append(
                    kind=MEMORY_DELETION,
                    tenant_id=principal.tenant_id,
                    ref=memory_id,
                    subject_digest=self.registry.subject_digest(principal.tenant_id, record.subject_id),
                )
        logger.info(
            "memory deleted on request",
            extra={
                "memory_id": memory_id,
                "older_versions": sum(1 for t in targets if t.id != memory_id),
                "also_deleted": folded_total,
            },
        )
        return ForgetReply(id=memory_id)


def _content_and_lineage(
    s: TenantSession, record: MemoryRecord, folded: list[str]
) -> tuple[list[str], list[str]]:
    """The content hashes the tombstone must refuse again, and the lineage it covers: the memory's
    own and those of the duplicates consolidated into it."""
    hashes = [record.content_hash]
    lineage = set(record.lineage_keys)
    for other_id in folded:
        other = s.get_record(other_id)
        if other is not None:
            hashes.append(other.content_hash)
            lineage |= set(other.lineage_keys)
    return hashes, sorted(lineage)
