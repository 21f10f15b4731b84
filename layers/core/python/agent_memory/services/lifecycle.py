"""Nightly lifecycle: TTL purge, hard delete after the archive window, transcript
expiry, revalidation by age, legal holds, consolidation, and sealing of access events.

Every pass is batched and idempotent: a crash midway leaves committed batches
done and the next run picks up the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from agent_memory.domain.enums import EventType, Role, Status
from agent_memory.domain.errors import Conflict, NotFound
from agent_memory.domain.policy import PolicyProfile
from agent_memory.domain.records import MemoryRecord, Principal, new_id, utcnow
from agent_memory.domain.sentences import split_sentences
from agent_memory.observability import logger
from agent_memory.ports.embedder import Embedder
from agent_memory.ports.messaging import ObjectStore
from agent_memory.ports.rows import ExpiredRecord
from agent_memory.ports.store import MemoryStore, NewEvent
from agent_memory.ports.system_of_record import SystemOfRecord, SystemOfRecordUnavailable
from agent_memory.services.authorization import require_mutation, visible
from agent_memory.services.consolidation import merge_duplicates, weigh_observations
from agent_memory.services.digests import digest_expiring_episodes
from agent_memory.services.policies import PolicyRegistry
from agent_memory.services.revalidation_due import due_arguments, due_events
from agent_memory.services.write_gateway import WriteGateway

if TYPE_CHECKING:
    from agent_memory.progress import ProgressBar, ProgressFactory

CANDIDATE_MAX_AGE_DAYS = 90


@dataclass
class PurgeReport:
    dry_run: bool
    expired: int = 0
    deleted: int = 0
    held: int = 0
    transcripts_deleted: int = 0
    merged: int = 0
    promoted: int = 0
    demoted: int = 0
    access_events_sealed: int = 0
    reindexed: int = 0
    overdue_erasures: int = 0
    working_expired: int = 0  # expired working-memory rows swept (reads never returned them anyway)
    revalidation_flagged: int = 0
    ticket_memories_bounded: int = 0  # ticket-scoped memories given an end by their resolved ticket
    contest_marks_settled: int = 0  # `contested` markers left on records nothing contests any more
    digests: int = 0  # subjects whose expiring episodes became one digest (domain/digest.py)
    episodes_digested: int = 0
    batches: int = 0
    longest_batch_ms: float = 0.0
    tenants: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return self.__dict__.copy()


class LifecycleService:
    def __init__(
        self,
        store: MemoryStore,
        policies: PolicyRegistry,
        objects: ObjectStore | None,
        *,
        transcript_ttl_days: int,
        seal_access_log: Callable[[str], int] | None = None,
        embedder: Embedder | None = None,
        system_of_record: SystemOfRecord | None = None,
        clock: Callable[[], datetime] = utcnow,
        batch_size: int = 1000,
        pause_ratio: float = 0.0,
        sleep: Callable[[float], None] | None = None,
        gateway: WriteGateway | None = None,
    ) -> None:
        self.gateway = gateway  # writes the digests of expiring episodes (none without it)
        self.store = store
        self.policies = policies
        self.objects = objects
        self.transcript_ttl_days = transcript_ttl_days
        self.seal_access_log = seal_access_log
        # Completes an erasure that kept records under a hold now released (its id, or None).
        self.hold_released: Callable[[Principal, str, str], str | None] | None = None
        self.embedder = embedder
        self.system_of_record = system_of_record
        self.clock = clock
        self.batch_size = batch_size
        self.pause_ratio = pause_ratio
        self.sleep = sleep

    def purge(
        self,
        *,
        dry_run: bool = False,
        consolidate: bool = True,
        tenants: list[str] | None = None,
        progress: ProgressFactory | None = None,
    ) -> PurgeReport:
        """The nightly run over every tenant (or `tenants`). With `progress`, each tenant's expire and
        delete steps and its reindexing show a bar (the due rows are counted first, for the time
        left); the log gets one summary line either way, never a line per record."""
        report = PurgeReport(dry_run=dry_run)
        for tenant in tenants or list(self.store.tenants()):
            report.tenants.append(tenant)
            if not dry_run:  # before the expire step: a memory whose ticket ended long ago goes tonight
                report.ticket_memories_bounded += self.bound_resolved_tickets(tenant)
            if not dry_run and self.gateway is not None:  # before they expire: what they said stays
                digests, covered = digest_expiring_episodes(
                    self.store, self.gateway, tenant, self.policies.for_tenant(tenant), self.clock()
                )
                report.digests += digests
                report.episodes_digested += len(covered)
            self._purge_tenant(tenant, report, dry_run=dry_run, progress=progress)
            if not dry_run:
                report.contest_marks_settled += self.settle_contest_marks(tenant)
            if consolidate and not dry_run:
                self.consolidate(tenant, report)
            if self.seal_access_log and not dry_run:
                report.access_events_sealed += self.seal_access_log(tenant)
            if not dry_run:
                report.reindexed += self.reindex_pending(tenant, progress=progress)
        logger.info("purge finished", extra={k: v for k, v in report.as_dict().items() if k != "tenants"})
        return report

    def _purge_tenant(
        self, tenant: str, report: PurgeReport, *, dry_run: bool, progress: ProgressFactory | None = None
    ) -> None:
        now = self.clock()
        policy = self.policies.for_tenant(tenant)
        archive_cutoff = now - timedelta(days=policy.archive_window_days)
        candidate_cutoff = now - timedelta(days=CANDIDATE_MAX_AGE_DAYS)
        if dry_run:
            with self.store.tenant(tenant) as s:
                counts = s.count_purgeable(now, archive_cutoff, candidate_cutoff)
                report.overdue_erasures += len(s.overdue_erasures(now))
                report.revalidation_flagged += s.count_revalidation_due(*due_arguments(policy, now))
            report.expired += counts["expire"]
            report.deleted += counts["delete"]
            report.held += counts["held"]
            with self.store.tenant(tenant) as s:
                report.working_expired += s.count_expired_working()
            return
        due: dict[str, int] = {}
        if progress is not None:  # only for a bar's time left: one count, never in the nightly Lambda
            with self.store.tenant(tenant) as s:
                due = s.count_purgeable(now, archive_cutoff, candidate_cutoff)
        for step in ("expire", "delete"):
            bar = (
                progress(f"purge {tenant}: {step}", total=due.get(step), unit="record") if progress else None
            )
            try:
                self._purge_step(tenant, step, report, now, archive_cutoff, candidate_cutoff, bar)
            finally:
                if bar is not None:
                    bar.close()
        with self.store.tenant(tenant) as s:
            report.held += s.count_purgeable(now, archive_cutoff, candidate_cutoff)["held"]
            report.overdue_erasures += len(s.overdue_erasures(now))
        report.transcripts_deleted += self._expire_transcripts(tenant, now)
        report.working_expired += self._sweep_working(tenant)
        report.revalidation_flagged += self.flag_revalidation_due(tenant, policy, now)

    def _purge_step(
        self,
        tenant: str,
        step: str,
        report: PurgeReport,
        now: datetime,
        archive_cutoff: datetime,
        candidate_cutoff: datetime,
        bar: ProgressBar | None,
    ) -> None:
        """One step of the purge (expire, or delete after the archive window), batch by batch."""
        import time

        after = ""  # keyset: each batch starts where the last one ended, not at the first id again
        while True:
            t0 = time.perf_counter()
            rows: Sequence[ExpiredRecord]
            with self.store.tenant(tenant) as s:
                if step == "expire":
                    rows = s.expire_batch(now, self.batch_size, candidate_cutoff, after)
                    cursors = [r["id"] for r in rows]
                    event = EventType.EXPIRED
                else:
                    deleted = s.hard_delete_batch(archive_cutoff, self.batch_size, after)
                    rows, cursors = deleted, [r["cursor"] for r in deleted]
                    event = EventType.DELETED
                if rows:
                    s.append_events(
                        [
                            NewEvent(
                                event.value,
                                "lifecycle",
                                r["id"],
                                r["subject_id"],
                                f"ttl_{step}",
                                {"content_hash": r["content_hash"]},
                            )
                            for r in rows
                        ]
                    )
            report.batches += 1
            if rows:  # keyset cursor: the expire step walks ids, the delete step (valid_to, id)
                after = max(cursors)
            elapsed = time.perf_counter() - t0
            report.longest_batch_ms = max(report.longest_batch_ms, elapsed * 1000)
            if self.pause_ratio and rows:
                (self.sleep or time.sleep)(self.pause_ratio * elapsed)  # yield the database to reads
            if step == "expire":
                report.expired += len(rows)
            else:
                report.deleted += len(rows)
            if bar is not None:
                bar.update(len(rows))
            if len(rows) < self.batch_size:
                break

    def flag_revalidation_due(self, tenant: str, policy: PolicyProfile, now: datetime) -> int:
        """Flag `needs_revalidation` on the active records past the policy's revalidation age (from
        the later of effective_at and last_validated_at), in batches, each with one audit event
        per record. A flagged record stays flagged until confirmed (`revalidate`)."""
        cutoffs, sor_slots = due_arguments(policy, now)
        flagged = 0
        after = ""
        while True:
            with self.store.tenant(tenant) as s:
                rows = s.flag_revalidation_batch(cutoffs, sor_slots, self.batch_size, after)
                if rows:
                    s.append_events(due_events(rows, policy))
            flagged += len(rows)
            if len(rows) < self.batch_size:
                return flagged
            after = max(r["id"] for r in rows)

    def revalidate(self, principal: Principal, memory_id: str) -> MemoryRecord:
        """Confirm one active memory as still true: `last_validated_at` becomes now and the
        `needs_revalidation` flag is cleared, audited. Above the caller's clearance looks absent.
        A memory in a slot the system of record owns is still checked against the live value at
        the next retrieval, and flagged again if it contradicts it."""
        require_mutation(principal, Role.AGENT, Role.INTEGRATION, action="revalidate memories")
        now = self.clock()
        with self.store.tenant(principal.tenant_id) as s:
            record = visible(principal, s.get_record(memory_id, for_update=True))
            if record is None:
                raise NotFound(f"memory {memory_id} not found")
            if record.status is not Status.ACTIVE:
                raise Conflict(
                    f"memory {memory_id} is {record.status.value}; only an active memory is revalidated"
                )
            confirmed = s.update_status(
                record.id, record.status.value, last_validated_at=now, needs_revalidation=False
            )
            s.append_events(
                [
                    NewEvent(
                        EventType.REVALIDATED.value,
                        principal.sub,
                        record.id,
                        record.subject_id,
                        "revalidated_by_caller",
                        {
                            "was_flagged": record.needs_revalidation,
                            "previously_validated_at": record.last_validated_at.isoformat()
                            if record.last_validated_at
                            else None,
                        },
                    )
                ]
            )
        return confirmed

    def _sweep_working(self, tenant: str) -> int:
        """Delete expired working-memory rows in batches. Housekeeping only: the TTL is enforced
        by every read's own SQL, so nothing here decides what is shown."""
        swept = 0
        while True:
            with self.store.tenant(tenant) as s:
                n = s.sweep_expired_working(self.batch_size)
            swept += n
            if n < self.batch_size:
                return swept

    def _expire_transcripts(self, tenant: str, now: datetime) -> int:
        if self.objects is None:
            return 0
        cutoff = now - timedelta(days=self.transcript_ttl_days)
        with self.store.tenant(tenant) as s:
            old = s.delete_old_sessions(cutoff)
        for row in old:
            self.objects.delete(row["transcript_key"])
        if old:
            with self.store.tenant(tenant) as s:
                s.clear_transcript_keys([r["session_id"] for r in old])
        return len(old)

    def consolidate(self, tenant: str, report: PurgeReport) -> None:
        """Merge duplicate memories into one canonical record; promote corroborated observations."""
        now = self.clock()
        policy = self.policies.for_tenant(tenant)
        with self.store.tenant(tenant) as s:
            report.merged += merge_duplicates(s, policy, now)
            promoted, demoted = weigh_observations(s)
            report.promoted += promoted
            report.demoted += demoted

    def reindex_pending(self, tenant: str, batch: int = 100, progress: ProgressFactory | None = None) -> int:
        """Give a vector (and sentence vectors) to records written while the embedder was down.
        Keyword and structured retrieval found them meanwhile; now vector search does too.
        With `progress`, a bar counts the records done (drawn only once there is something to do)."""
        if self.embedder is None:
            return 0
        done = 0
        bar: ProgressBar | None = None
        try:
            while True:
                try:
                    with self.store.tenant(tenant) as s:
                        records = s.records_missing_embedding(batch)
                        if not records:
                            return done
                        pieces = [[r.content, *split_sentences(r.content)] for r in records]
                        vectors = self.embedder.embed([p for ps in pieces for p in ps])
                        at = 0
                        for record, ps in zip(records, pieces, strict=True):
                            s.set_embedding(record.id, vectors[at], self.embedder.name)
                            if len(ps) > 1:
                                s.insert_sentences(
                                    record.id, record.subject_id, vectors[at + 1 : at + len(ps)]
                                )
                            at += len(ps)
                except Exception as exc:  # still down: the records stay flagged and the next run retries
                    logger.warning("reindex deferred", extra={"tenant": tenant, "error": type(exc).__name__})
                    return done
                done += len(records)
                if progress is not None:
                    bar = bar or progress(f"reindex {tenant}", total=None, unit="record")
                    bar.update(len(records))
                if len(records) < batch:
                    return done
        finally:
            if bar is not None:
                bar.close()

    # -- ticket-scoped memory and contested markers ----------------------------------
    def bound_resolved_tickets(self, tenant: str) -> int:
        """Ticket-scoped memories end `ticket_memory_retention_days` after their ticket resolves
        (the product requirements' task memory). Each (subject, ticket) with active ticket-scoped memories is asked
        of the system of record, with no database connection held; a ticket in one of the policy's
        resolved statuses bounds their expiry at its resolution (its last update, never later than
        now) plus the retention, and the expire step retires them once that has passed. An earlier
        expiry stands. A ticket the system of record cannot answer for now is asked again on the
        next run; one it does not know keeps its memories as they are (their type's TTL applies)."""
        if self.system_of_record is None:
            return 0
        policy = self.policies.for_tenant(tenant)
        now = self.clock()
        retention = timedelta(days=policy.ticket_memory_retention_days)
        bounded = 0
        after = ("", "")
        while True:
            with self.store.tenant(tenant) as s:
                # Once bounded, a ticket's memories expire by now + retention: they drop out here,
                # so a resolved ticket is not asked about again every night.
                scopes = s.open_ticket_scopes(self.batch_size, after, unbounded_after=now + retention)
            ended: list[tuple[str, str, datetime]] = []
            for scope in scopes:
                subject_id, ticket_id = scope["subject_id"], scope["ticket_id"]
                try:
                    ticket = self.system_of_record.ticket(tenant, subject_id, ticket_id)
                except SystemOfRecordUnavailable as exc:
                    logger.warning(
                        "ticket state unavailable; asked again next run", extra={"error": str(exc)}
                    )
                    continue
                status = (ticket.status or "").strip().casefold() if ticket is not None else ""
                if ticket is None or status not in policy.ticket_resolved_statuses:
                    continue
                resolved_at = min(ticket.updated_at or now, now)
                ended.append((subject_id, ticket_id, resolved_at + retention))
            if ended:
                with self.store.tenant(tenant) as s:
                    events = []
                    for subject_id, ticket_id, end in ended:
                        for memory_id in s.bound_ticket_memories(subject_id, ticket_id, end):
                            events.append(
                                NewEvent(
                                    EventType.UPDATED.value,
                                    "lifecycle",
                                    memory_id,
                                    subject_id,
                                    "ticket_resolved_expiry_set",
                                    {
                                        "expires_at": end.isoformat(),
                                        "retention_days": policy.ticket_memory_retention_days,
                                    },
                                )
                            )
                    if events:
                        s.append_events(events)
                    bounded += len(events)
            if len(scopes) < self.batch_size:
                return bounded
            after = (scopes[-1]["subject_id"], scopes[-1]["ticket_id"])

    def settle_contest_marks(self, tenant: str) -> int:
        """A `contested` marker left on an active record whose contesting record went without a
        reviewer's decision (it expired, was erased or deleted) is cleared, audited."""
        settled = 0
        while True:
            with self.store.tenant(tenant) as s:
                cleared = s.settle_stale_contest_marks(self.batch_size)
                if cleared:
                    s.append_events(
                        [
                            NewEvent(
                                EventType.UPDATED.value,
                                "lifecycle",
                                row["id"],
                                row["subject_id"],
                                "contest_ended_without_review",
                                {"contested": False},
                            )
                            for row in cleared
                        ]
                    )
            settled += len(cleared)
            if len(cleared) < self.batch_size:
                return settled

    # -- legal hold ----------------------------------------------------------------
    def set_subject_hold(
        self, principal: Principal, subject_id: str, *, hold: bool, reason: str
    ) -> dict[str, Any]:
        require_mutation(principal, Role.PRIVACY_OFFICER, action="set legal holds")
        with self.store.tenant(principal.tenant_id) as s:
            if hold:
                hold_id: str | None = s.set_subject_hold(subject_id, reason, principal.sub, new_id("hold"))
            else:
                hold_id = s.clear_subject_hold(subject_id)
            s.append_events(
                [
                    NewEvent(
                        EventType.UPDATED.value,
                        principal.sub,
                        None,
                        subject_id,
                        "legal_hold_set" if hold else "legal_hold_cleared",
                        {"reason": reason, "hold_id": hold_id},
                    )
                ]
            )
        return {"subject_id": subject_id, "legal_hold": hold} | self._released(
            principal, subject_id, hold_id, hold
        )

    def set_record_hold(
        self, principal: Principal, memory_id: str, *, hold: bool, reason: str
    ) -> dict[str, Any]:
        require_mutation(principal, Role.PRIVACY_OFFICER, action="set legal holds")
        with self.store.tenant(principal.tenant_id) as s:
            if visible(principal, s.get_record(memory_id, for_update=True)) is None:
                raise NotFound(f"memory {memory_id} not found")  # above clearance looks like absent
            row = s.set_record_hold(memory_id, hold, new_id("hold"))
            if row is None:
                raise NotFound(f"memory {memory_id} not found")
            s.append_events(
                [
                    NewEvent(
                        EventType.UPDATED.value,
                        principal.sub,
                        memory_id,
                        row["subject_id"],
                        "legal_hold_set" if hold else "legal_hold_cleared",
                        {"reason": reason, "hold_id": row["hold_id"]},
                    )
                ]
            )
        return {"memory_id": memory_id, "legal_hold": hold} | self._released(
            principal, row["subject_id"], row["hold_id"], hold
        )

    def _released(
        self, principal: Principal, subject_id: str, hold_id: str | None, hold: bool
    ) -> dict[str, Any]:
        """The hold's id, and on release the erasure it lets complete (when one kept records under it)."""
        out: dict[str, Any] = {"hold_id": hold_id} if hold_id else {}
        if not hold and hold_id and self.hold_released is not None:
            erasure_id = self.hold_released(principal, subject_id, hold_id)
            if erasure_id:
                out["erasure_id"] = erasure_id
        return out
