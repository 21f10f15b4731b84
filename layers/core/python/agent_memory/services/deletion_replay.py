"""Replaying the deletion registry (the product requirements: "restores replay the tombstone registry before
serving traffic"; "recovery drills verify that tombstones are honored").

The registry lives outside the database, so a database restored from a backup taken before an
erasure or a deletion still holds what was erased or deleted. At start, before the service
answers, every registry entry this database has not replayed yet (past its watermark) is applied
again through the same flows:

- an erasure the database holds as verified is already applied (data of the subject written since
  is not touched); otherwise the subject (found by its keyed digest among the tenant's subjects)
  is erased now, to a verified receipt, and its tombstones are written again;
- a deleted memory the database holds as deleted (or does not hold) needs nothing; otherwise it is
  forgotten again, with its older versions and its tombstone.

Replaying twice does nothing the second time. Each tenant with entries replayed gets one
`deletion_registry_replayed` audit event (ids and counts, no content).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from agent_memory.domain.deletion_registry import ERASURE, MEMORY_DELETION, RegistryEntry, chain_problem
from agent_memory.domain.enums import EventType, Role, Sensitivity, Status
from agent_memory.domain.errors import Conflict, NotFound
from agent_memory.domain.records import Principal
from agent_memory.observability import logger
from agent_memory.ports.deletion_registry import DeletionRegistry
from agent_memory.ports.store import MemoryStore, NewEvent
from agent_memory.services.erasure import ErasureRequest, ErasureService
from agent_memory.services.forget import ForgetRequest, ForgetService

REPLAY_ACTOR = "deletion-registry-replay"
REPLAY_REASON = "replayed_after_restore"
_LISTED = 100  # ids named in one audit event; the counts are always whole


@dataclass
class TenantReplay:
    entries: int = 0
    erasures_reapplied: int = 0
    memories_reapplied: int = 0
    already_applied: int = 0
    absent: int = 0  # a deleted memory this database never held: nothing to do
    held: int = 0  # under a legal hold in this database: kept, as the original flow keeps it
    failed: int = 0
    erasure_ids: list[str] = field(default_factory=list)  # the replay's own erasures
    memory_ids: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {
            "entries": self.entries,
            "erasures_reapplied": self.erasures_reapplied,
            "memories_reapplied": self.memories_reapplied,
            "already_applied": self.already_applied,
            "absent": self.absent,
            "held": self.held,
            "failed": self.failed,
        }


@dataclass
class ReplayReport:
    registry_entries: int
    replayed_from_seq: int
    through_seq: int
    chain_ok: bool
    chain_problem: str | None = None
    tenants: dict[str, TenantReplay] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "registry_entries": self.registry_entries,
            "replayed_from_seq": self.replayed_from_seq,
            "through_seq": self.through_seq,
            "chain_ok": self.chain_ok,
            "chain_problem": self.chain_problem,
            "tenants": {t: r.counts() for t, r in sorted(self.tenants.items())},
        }


class DeletionReplay:
    def __init__(
        self,
        store: MemoryStore,
        registry: DeletionRegistry,
        erasure: ErasureService,
        forget: ForgetService,
    ) -> None:
        self.store = store
        self.registry = registry
        self.erasure = erasure
        self.forget = forget

    def replay(self) -> ReplayReport:
        """Apply every registry entry past this database's watermark, then move the watermark."""
        entries = self.registry.entries()
        problem = chain_problem(entries)
        if problem is not None:  # replayed all the same: a broken chain must not keep data alive
            logger.error("deletion registry chain broken", extra={"problem": problem})
        through = self.store.deletion_replay_watermark()
        if entries and through > entries[-1].seq:
            logger.warning(
                "database has replayed more registry entries than the registry holds",
                extra={"watermark": through, "registry_entries": len(entries)},
            )
        pending = [e for e in entries if e.seq > through]
        report = ReplayReport(
            registry_entries=len(entries),
            replayed_from_seq=through,
            through_seq=entries[-1].seq if entries else through,
            chain_ok=problem is None,
            chain_problem=problem,
        )
        by_tenant: dict[str, list[RegistryEntry]] = defaultdict(list)
        for e in pending:
            by_tenant[e.tenant_id].append(e)
        for tenant_id, tenant_entries in sorted(by_tenant.items()):
            result = self._replay_tenant(tenant_id, tenant_entries)
            report.tenants[tenant_id] = result
            self._audit(tenant_id, result, report)
        if any(r.erasure_ids for r in report.tenants.values()):
            # The replay's own erasures wrote entries of their own: they are applied here already.
            entries = self.registry.entries()
        if pending:
            self.store.set_deletion_replay_watermark(entries[-1].seq, entries[-1].hash)
        logger.info("deletion registry replayed", extra=report.as_dict())
        return report

    def _replay_tenant(self, tenant_id: str, entries: list[RegistryEntry]) -> TenantReplay:
        result = TenantReplay(entries=len(entries))
        principal = Principal(
            sub=REPLAY_ACTOR,
            tenant_id=tenant_id,
            roles=frozenset({Role.PRIVACY_OFFICER, Role.AGENT}),
            clearance=Sensitivity.RESTRICTED,
        )
        erasures = [e for e in entries if e.kind == ERASURE]
        if erasures:  # first: a deleted memory of an erased subject goes with it
            self._replay_erasures(principal, erasures, result)
        for e in entries:
            if e.kind == MEMORY_DELETION:
                self._replay_deletion(principal, e, result)
        return result

    def _replay_erasures(
        self, principal: Principal, entries: list[RegistryEntry], result: TenantReplay
    ) -> None:
        tenant_id = principal.tenant_id
        with self.store.tenant(tenant_id, subjects=None) as s:
            applied = {
                e.ref for e in entries if (row := s.get_erasure(e.ref)) and row["status"] == "verified"
            }
            wanted = {e.subject_digest for e in entries if e.ref not in applied}
            subjects = (
                sorted(
                    sid for sid in s.subject_ids() if self.registry.subject_digest(tenant_id, sid) in wanted
                )
                if wanted
                else []
            )
        result.already_applied += sum(1 for e in entries if e.ref in applied)
        for subject_id in subjects:
            view = self.erasure.erase_now(principal, subject_id, ErasureRequest(reason=REPLAY_REASON))
            result.erasure_ids.append(str(view["erasure_id"]))
            if view["status"] == "verified":
                result.erasures_reapplied += 1
            else:
                result.failed += 1
                logger.error("replayed erasure failed", extra={"erasure_id": view["erasure_id"]})
        # entries whose subject this database does not hold: nothing of it to erase
        found = {self.registry.subject_digest(tenant_id, sid) for sid in subjects}
        result.absent += sum(1 for e in entries if e.ref not in applied and e.subject_digest not in found)

    def _replay_deletion(self, principal: Principal, entry: RegistryEntry, result: TenantReplay) -> None:
        with self.store.tenant(principal.tenant_id, subjects=None) as s:
            record = s.get_record(entry.ref)
        if record is None:
            result.absent += 1
            return
        if record.status is Status.DELETED:
            result.already_applied += 1
            return
        try:
            self.forget.forget(principal, entry.ref, ForgetRequest(reason=REPLAY_REASON), register=False)
        except Conflict:
            result.held += 1
            return
        except NotFound:
            result.absent += 1
            return
        result.memories_reapplied += 1
        result.memory_ids.append(entry.ref)

    def _audit(self, tenant_id: str, result: TenantReplay, report: ReplayReport) -> None:
        payload: dict[str, Any] = {
            **result.counts(),
            "replayed_from_seq": report.replayed_from_seq,
            "through_seq": report.through_seq,
            "chain_ok": report.chain_ok,
            "erasure_ids": result.erasure_ids[:_LISTED],
            "memory_ids": result.memory_ids[:_LISTED],
        }
        with self.store.tenant(tenant_id, subjects=None) as s:
            s.append_events(
                [
                    NewEvent(
                        EventType.DELETIONS_REPLAYED.value, REPLAY_ACTOR, None, None, REPLAY_REASON, payload
                    )
                ]
            )
