"""A subject's export: the data-access side of erasure (GDPR Art. 15).

Everything held about one subject, as one JSON document read in pages: every memory in every
status (superseded versions are the history of a slot; deleted ones keep a content-free entry),
the closed sessions with their transcript references, the subject's legal hold, its erasure
requests, its tombstones (counted, never the hashes) and its audit trail. Each page is audited.

The clearance rule applies: a record above the caller's clearance is left out as if absent, and
so is every reference to it (a session's memory ids, an audit event about it).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, computed_field

from agent_memory.domain.enums import VERIFIED_AUTHORITIES, EventType, Role, Status
from agent_memory.domain.errors import InvalidRequest
from agent_memory.domain.records import MemoryRecord, Principal, utcnow
from agent_memory.ports.rows import SubjectSessionRow
from agent_memory.ports.store import MemoryStore, NewEvent, TenantSession
from agent_memory.services.authorization import require_read
from agent_memory.services.policies import PolicyRegistry

# The document's sections, in the order the pages walk them.
SECTIONS = ("memories", "sessions", "erasures", "events")
EXPORT_REASON = "subject_access_export"
_ALL_STATUSES = [s.value for s in Status]


class LegalHoldView(BaseModel):
    held: bool
    hold_id: str | None = None
    reason: str | None = None
    set_by: str | None = None
    set_at: datetime | None = None


class TombstoneCounts(BaseModel):
    deletions: int = Field(description="tombstone entries left by memories deleted on request")
    erasures: int = Field(description="tombstone entries left by erasures of the subject")
    deleted_memories: int


class TranscriptReference(BaseModel):
    key: str | None = Field(description="object key of the masked transcript; null once it expired")
    sha256: str


class SessionView(BaseModel):
    session_id: str
    ticket_id: str | None
    channel: str | None
    occurred_at: datetime
    status: str
    turns: int
    transcript: TranscriptReference
    memory_ids: list[str]
    outcome: dict[str, Any]
    failure_reason: str | None
    extractor: str | None
    created_at: datetime
    updated_at: datetime


class ErasureView(BaseModel):
    erasure_id: str
    status: str
    reason: str | None
    request_reference: str | None
    requested_by: str
    deadline: datetime
    receipt: dict[str, Any] | None
    failure_reason: str | None
    created_at: datetime
    completed_at: datetime | None


class EventView(BaseModel):
    seq: int
    id: str
    event_type: str
    memory_id: str | None
    actor: str
    reason: str | None
    payload: dict[str, Any]
    # the reasons and references people typed, kept beside the chain (as in GET /v1/audit)
    free_text: dict[str, str] | None = None
    created_at: datetime
    # "above_clearance": an event about a record the caller may not see keeps its place in the
    # trail without the record's id or payload, as in GET /v1/audit
    redacted: str | None = None


class ExportedMemory(MemoryRecord):
    """A memory record as exported; a deleted one has no content and says when it was deleted.
    `verified` (a property of every record) is part of the exported shape."""

    deleted_at: datetime | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def verified(self) -> bool:
        return self.authority in VERIFIED_AUTHORITIES

    @computed_field  # type: ignore[prop-decorator]
    @property
    def section(self) -> str:
        """The context section it is shown in when served, as every memory view says."""
        return self.context_section()


class WorkingView(BaseModel):
    """A live working-memory value of the subject (values expire within minutes)."""

    session_id: str
    key: str
    value: Any
    expires_at: datetime


class SubjectExport(BaseModel):
    """One page of the document. Concatenate each list over the pages (`next_cursor` until null)."""

    subject_id: str
    generated_at: datetime
    legal_hold: LegalHoldView
    tombstones: TombstoneCounts
    memories: list[ExportedMemory] = Field(
        description="memory records in every status, newest first; a deleted one has no content"
    )
    sessions: list[SessionView] = Field(description="closed sessions, newest first")
    erasures: list[ErasureView] = Field(description="erasure requests, newest first")
    events: list[EventView] = Field(description="the subject's audit trail, oldest first (no content)")
    working: list[WorkingView] = Field(
        default_factory=list,
        description="live working-memory values in every session (on the first page only)",
    )
    next_cursor: str | None


def _encode(section: str, key: Any, upto: int) -> str:
    raw = json.dumps({"s": section, "k": key, "u": upto}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode(cursor: str | None) -> tuple[int, Any, int | None]:
    """(index of the section to continue, its keyset position, the last audit sequence number the
    export covers); (0, None, None) for the first page."""
    if not cursor:
        return 0, None, None
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        section, key, upto = data["s"], data["k"], data["u"]
        if not isinstance(upto, int) or isinstance(upto, bool) or upto < 0:
            raise ValueError("events bound")
        index = SECTIONS.index(section)
        if key is None:  # the section from its start
            pass
        elif section == "events":
            if not isinstance(key, int) or isinstance(key, bool) or key < 0:
                raise ValueError("events position")
        else:
            at, ident = key
            key = (datetime.fromisoformat(at), str(ident))
    except (ValueError, TypeError, KeyError) as exc:
        raise InvalidRequest("cursor is not one this service issued", field="cursor") from exc
    return index, key, upto


class ExportService:
    def __init__(
        self, store: MemoryStore, policies: PolicyRegistry, clock: Callable[[], datetime] = utcnow
    ) -> None:
        self.store = store
        self.policies = policies
        self.clock = clock

    def export(
        self, principal: Principal, subject_id: str, *, cursor: str | None, limit: int | None
    ) -> SubjectExport:
        """One page of at most `limit` entries (the policy's `export_page_size` by default and at
        most), walking memories, sessions, erasures, then events; each page writes an event."""
        require_read(principal, Role.PRIVACY_OFFICER)
        ceiling = self.policies.for_tenant(principal.tenant_id).export_page_size
        if limit is None:
            limit = ceiling
        if not 1 <= limit <= ceiling:
            raise InvalidRequest(
                f"limit must be between 1 and {ceiling} (the policy's page size)", field="limit"
            )
        with self.store.tenant(principal.tenant_id) as s:
            found, next_cursor = self._walk(s, principal, subject_id, cursor, limit)
            working = (
                [WorkingView(**w) for w in s.subject_working_items(subject_id)] if cursor is None else []
            )
            hold = s.subject_hold(subject_id)
            tombstones = s.subject_tombstones(subject_id)
            s.append_events(
                [
                    NewEvent(
                        EventType.SUBJECT_EXPORTED.value,
                        principal.sub,
                        None,
                        subject_id,
                        EXPORT_REASON,
                        {
                            "continued": cursor is not None,
                            "complete": next_cursor is None,
                            **{name: len(items) for name, items in found.items()},
                        },
                    )
                ]
            )
        return SubjectExport(
            subject_id=subject_id,
            generated_at=self.clock(),
            legal_hold=LegalHoldView(held=hold is not None, **(dict(hold) if hold else {})),
            tombstones=TombstoneCounts(**tombstones),
            memories=found["memories"],
            sessions=found["sessions"],
            erasures=found["erasures"],
            events=found["events"],
            working=working,
            next_cursor=next_cursor,
        )

    def _walk(
        self, s: TenantSession, principal: Principal, subject_id: str, cursor: str | None, limit: int
    ) -> tuple[dict[str, list[Any]], str | None]:
        """The entries of one page, section by section from the cursor, and the next page's cursor."""
        start, position, upto = _decode(cursor)
        found: dict[str, list[Any]] = {name: [] for name in SECTIONS}
        left = limit
        # The export covers the audit trail as it stood when it began: the events its own pages
        # write are not walked (else a small page size would never reach the end).
        if upto is None:
            upto = s.last_event_seq()
        for index in range(start, len(SECTIONS)):
            section = SECTIONS[index]
            if left == 0:  # the page is full: the next one starts this section
                return found, _encode(section, None, upto)
            key = position if index == start else None
            read = {
                "memories": self._memories,
                "sessions": self._sessions,
                "erasures": self._erasures,
                "events": self._events,
            }[section]
            items, consumed, resume = read(s, principal, subject_id, key, left, upto)
            found[section] = items
            left -= consumed
            if resume is not None:
                return found, _encode(section, resume, upto)
        return found, None

    # Each section reader returns up to `limit` entries after `key`: the items shown, how many
    # entries were read, and where to resume (None: the section is done).

    def _memories(
        self, s: TenantSession, principal: Principal, subject_id: str, key: Any, limit: int, upto: int
    ) -> tuple[list[Any], int, Any]:
        records = s.list_subject(
            subject_id,
            statuses=_ALL_STATUSES,
            types=None,
            max_sensitivity_rank=principal.clearance.rank,
            before=key,
            limit=limit + 1,
        )
        shown = records[:limit]
        resume = [shown[-1].created_at.isoformat(), shown[-1].id] if len(records) > limit else None
        return [_memory_view(r) for r in shown], len(shown), resume

    def _sessions(
        self, s: TenantSession, principal: Principal, subject_id: str, key: Any, limit: int, upto: int
    ) -> tuple[list[Any], int, Any]:
        rows = s.subject_sessions(subject_id, before=key, limit=limit + 1)
        shown = rows[:limit]
        above = s.records_above_clearance(
            {m for r in shown for m in r["memory_ids"]}, principal.clearance.rank
        )
        resume = [shown[-1]["created_at"].isoformat(), shown[-1]["session_id"]] if len(rows) > limit else None
        return [_session_view(r, above) for r in shown], len(shown), resume

    def _erasures(
        self, s: TenantSession, principal: Principal, subject_id: str, key: Any, limit: int, upto: int
    ) -> tuple[list[Any], int, Any]:
        rows = s.subject_erasures(subject_id, before=key, limit=limit + 1)
        shown = rows[:limit]
        resume = [shown[-1]["created_at"].isoformat(), shown[-1]["erasure_id"]] if len(rows) > limit else None
        return [ErasureView(**r) for r in shown], len(shown), resume

    def _events(
        self, s: TenantSession, principal: Principal, subject_id: str, key: Any, limit: int, upto: int
    ) -> tuple[list[Any], int, Any]:
        # one about a record above clearance keeps its place, without record id or payload
        events = [
            e
            for e in s.audit_events(
                subject_id=subject_id, memory_id=None, since=None, after_seq=key, limit=limit + 1
            )
            if e.seq <= upto
        ]
        page = events[:limit]
        above = s.records_above_clearance(
            {e.memory_id for e in page if e.memory_id}, principal.clearance.rank
        )
        views = [
            EventView(
                seq=e.seq,
                id=e.id,
                event_type=e.event_type,
                memory_id=None if e.memory_id in above else e.memory_id,
                actor=e.actor,
                reason=e.reason,
                payload={} if e.memory_id in above else e.payload,
                free_text=None if e.memory_id in above else e.free_text,
                created_at=e.created_at,
                redacted="above_clearance" if e.memory_id in above else None,
            )
            for e in page
        ]
        return views, len(page), (page[-1].seq if len(events) > limit else None)


def _memory_view(record: MemoryRecord) -> ExportedMemory:
    return ExportedMemory.model_validate(
        {
            **record.model_dump(),
            "deleted_at": record.valid_to if record.status is Status.DELETED else None,
        }
    )


def _session_view(row: SubjectSessionRow, above: set[str]) -> SessionView:
    return SessionView(
        session_id=row["session_id"],
        ticket_id=row["ticket_id"],
        channel=row["channel"],
        occurred_at=row["occurred_at"],
        status=row["status"],
        turns=row["turns"],
        transcript=TranscriptReference(key=row["transcript_key"], sha256=row["transcript_hash"]),
        memory_ids=[m for m in row["memory_ids"] if m not in above],
        outcome=row["outcome"] or {},
        failure_reason=row["failure_reason"],
        extractor=row["extractor"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )
