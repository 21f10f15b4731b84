"""Read use cases: one memory with its version chain, a subject's memories,
the review queue, and the audit log (ids and reasons, never content)."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agent_memory.domain.audit import ChainReport, verify_chain
from agent_memory.domain.enums import Role, Status
from agent_memory.domain.errors import InvalidRequest, NotFound
from agent_memory.domain.memory_types import family_slots
from agent_memory.domain.records import AuditEvent, MemoryRecord, Principal, utcnow
from agent_memory.domain.review_diff import review_diff, same_figures
from agent_memory.ports.store import MemoryStore, TenantSession
from agent_memory.services.authorization import require_read, visible
from agent_memory.services.policies import PolicyRegistry
from agent_memory.services.revalidation_due import flag_due_at_read
from agent_memory.services.review import evidence_required

MAX_PAGE = 200


def encode_cursor(created_at: datetime, record_id: str) -> str:
    raw = json.dumps([created_at.isoformat(), record_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> tuple[datetime, str] | None:
    if not cursor:
        return None
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        created, rid = json.loads(base64.urlsafe_b64decode(padded))
        return datetime.fromisoformat(created), str(rid)
    except (ValueError, TypeError) as exc:
        raise InvalidRequest("cursor is not one this service issued", field="cursor") from exc


@dataclass(frozen=True)
class Page:
    items: list[dict[str, Any]]
    next_cursor: str | None


class ReadService:
    def __init__(
        self, store: MemoryStore, policies: PolicyRegistry, clock: Callable[[], datetime] = utcnow
    ) -> None:
        self.store = store
        self.policies = policies
        self.clock = clock

    def _flag_due(self, s: TenantSession, tenant_id: str, records: list[MemoryRecord]) -> list[MemoryRecord]:
        """The records as read, with those that came due for revalidation since the nightly run
        flagged now (audited), so a read never shows a due record as current."""
        unflagged = [r for r in records if r.status is Status.ACTIVE and not r.needs_revalidation]
        if not unflagged:
            return records
        due = flag_due_at_read(
            s,
            [(r.id, r.type, r.slot, r.effective_at) for r in unflagged],
            self.policies.for_tenant(tenant_id),
            self.clock(),
        )
        return [r.model_copy(update={"needs_revalidation": True}) if r.id in due else r for r in records]

    def get_memory(self, principal: Principal, memory_id: str) -> dict[str, Any]:
        require_read(principal, Role.AGENT, Role.REVIEWER)
        with self.store.tenant(principal.tenant_id) as s:
            record = visible(principal, s.get_record(memory_id))
            if record is None:  # above clearance looks the same as absent: no existence oracle
                raise NotFound(f"memory {memory_id} not found")
            (record,) = self._flag_due(s, principal.tenant_id, [record])
            chain = s.slot_history(record.subject_id, record.slot) if record.slot else [record]
        history = [h for h in chain if visible(principal, h) is not None]
        hidden = {h.id for h in chain} - {h.id for h in history}
        view = record.public_view(hidden)
        view["history"] = [_history_entry(h, hidden) for h in history]
        return view

    def list_subject(
        self,
        principal: Principal,
        subject_id: str,
        *,
        status: str | None,
        memory_type: str | None,
        cursor: str | None,
        limit: int,
    ) -> Page:
        require_read(principal, Role.AGENT, Role.REVIEWER)
        statuses = [Status(status).value] if status else [Status.ACTIVE.value]
        if not 1 <= limit <= MAX_PAGE:
            raise InvalidRequest(f"limit must be between 1 and {MAX_PAGE}", field="limit")
        with self.store.tenant(principal.tenant_id) as s:
            rows = s.list_subject(
                subject_id,
                statuses=statuses,
                types=[memory_type] if memory_type else None,
                max_sensitivity_rank=principal.clearance.rank,
                before=decode_cursor(cursor),
                limit=limit + 1,
            )
            rows = [*self._flag_due(s, principal.tenant_id, rows[:limit]), *rows[limit:]]
            links = {i for r in rows[:limit] for i in (r.supersedes_id, r.superseded_by_id) if i}
            hidden = s.records_above_clearance(links, principal.clearance.rank)
        return _page(rows, limit, lambda r: r.public_view(hidden))

    def review_queue(
        self, principal: Principal, *, cursor: str | None, limit: int, group_similar: bool = False
    ) -> Page:
        """The items waiting for a decision, newest first. Each lists the other items of its subject
        that say nearly the same (`similar_pending`: same type and slot, vectors at least the policy's
        `review_group_similarity` alike, stating the same figures: "20% off" is never grouped with
        "25% off", however alike the sentences); with `group_similar`, only the newest of such a group is
        listed, standing for the others, so one review covers a statement extracted several times."""
        require_read(principal, Role.REVIEWER)
        policy = self.policies.for_tenant(principal.tenant_id)
        with self.store.tenant(principal.tenant_id) as s:
            rows = s.review_queue(
                limit=limit + 1, before=decode_cursor(cursor), max_sensitivity_rank=principal.clearance.rank
            )
            similar = s.similar_pending(
                [r.id for r in rows[:limit]], policy.review_group_similarity, principal.clearance.rank
            )
            items = []
            for r in rows[:limit]:
                others = [
                    (oid, at) for oid, at, text in similar.get(r.id, []) if same_figures(r.content, text)
                ]
                if group_similar and any((at, oid) > (r.created_at, r.id) for oid, at in others):
                    continue  # a newer item of the group stands for this one (on this page or before)
                active = visible(principal, s.active_for_slot(r.subject_id, r.slot) if r.slot else None)
                item: dict[str, Any] = {
                    "memory": r.public_view(),
                    "active": active.public_view() if active else None,
                    # a diff against the served record only where the reviewer may read it
                    "diff": review_diff(active, r) if active else None,
                    "evidence_required": evidence_required(r),
                }
                family = s.active_for_slots(r.subject_id, sorted(family_slots(r.slot)))
                if family:  # one commercial truth per family: the reviewer chooses (services/review)
                    item["family_active"] = [f.public_view() for f in family if visible(principal, f)]
                if others:
                    item["similar_pending"] = [oid for oid, _ in others]
                items.append(item)
        nxt = encode_cursor(rows[limit - 1].created_at, rows[limit - 1].id) if len(rows) > limit else None
        return Page(items, nxt)

    def audit(
        self,
        principal: Principal,
        *,
        subject_id: str | None,
        memory_id: str | None,
        since: datetime | None,
        cursor: str | None,
        limit: int,
    ) -> Page:
        require_read(principal, Role.AUDITOR)
        after = None
        if cursor:
            if not cursor.isdigit():
                raise InvalidRequest("cursor is not one this service issued", field="cursor")
            after = int(cursor)
        with self.store.tenant(principal.tenant_id) as s:
            if memory_id and s.records_above_clearance({memory_id}, principal.clearance.rank):
                return Page([], None)  # a record above clearance answers as an unknown id
            events = s.audit_events(
                subject_id=subject_id, memory_id=memory_id, since=since, after_seq=after, limit=limit + 1
            )
            above = s.records_above_clearance(
                {e.memory_id for e in events[:limit] if e.memory_id}, principal.clearance.rank
            )
        items = [_audit_view(e, e.memory_id in above) for e in events[:limit]]
        return Page(items, str(events[limit - 1].seq) if len(events) > limit else None)

    def verify_audit(self, tenant_id: str, *, batch: int = 5000) -> ChainReport:
        """Walk the tenant's whole chain in pages and recompute every link."""

        def all_events() -> Any:
            after = 0
            while True:
                with self.store.tenant(tenant_id) as s:
                    page: list[AuditEvent] = s.audit_events(
                        subject_id=None, memory_id=None, since=None, after_seq=after, limit=batch
                    )
                yield from page
                if len(page) < batch:
                    return
                after = page[-1].seq

        return verify_chain(tenant_id, all_events())


def _audit_view(event: AuditEvent, above_clearance: bool) -> dict[str, Any]:
    """An event about a record above the auditor's clearance keeps its place in the chain (seq,
    hashes, type, actor, time) but not its record id or payload: the content hash, slot and
    references stay out, as the record itself would. Such an event's hash cannot be recomputed by the reader; its links
    (prev_hash to the previous hash) still can."""
    view = event.model_dump(mode="json")
    if above_clearance:
        view.update(payload={}, memory_id=None, free_text=None, redacted="above_clearance")
    return view


def _history_entry(r: MemoryRecord, hidden: set[str]) -> dict[str, Any]:
    return {
        "id": r.id,
        "version": r.version,
        "status": r.status.value,
        "authority": r.authority.value,
        "created_at": r.created_at.isoformat(),
        "effective_at": r.effective_at.isoformat(),
        "superseded_at": r.superseded_at.isoformat() if r.superseded_at else None,
        "supersedes_id": None if r.supersedes_id in hidden else r.supersedes_id,
        "superseded_by_id": None if r.superseded_by_id in hidden else r.superseded_by_id,
        # what a version said and who vouched for it (the console's timeline)
        "content": r.content,
        "source": r.source.model_dump(mode="json"),
        "verified_by": r.verified_by,
        "verified_at": r.verified_at.isoformat() if r.verified_at else None,
        "evidence_ref": r.evidence_ref,
    }


def _page(rows: list[MemoryRecord], limit: int, view: Any) -> Page:
    nxt = encode_cursor(rows[limit - 1].created_at, rows[limit - 1].id) if len(rows) > limit else None
    return Page([view(r) for r in rows[:limit]], nxt)
