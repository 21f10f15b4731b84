"""Access events: written with every retrieval (one INSERT in the read transaction,
no audit-chain lock on the hot path), then sealed into the hash-chained audit log
in batches. Nothing is lost: a row leaves the log only in the transaction that
appends its `memory_retrieved` event."""

from __future__ import annotations

from agent_memory.domain.enums import EventType
from agent_memory.ports.store import MemoryStore, NewEvent


class AccessLogSealer:
    def __init__(self, store: MemoryStore, batch: int = 500) -> None:
        self.store = store
        self.batch = batch

    def seal_tenant(self, tenant_id: str) -> int:
        sealed = 0
        while True:
            with self.store.tenant(tenant_id) as s:
                rows = s.pending_retrieval_logs(self.batch)
                if not rows:
                    return sealed
                s.append_events(
                    [
                        NewEvent(
                            EventType.RETRIEVED.value,
                            r["actor"],
                            None,
                            r["subject_id"],
                            "retrieval",
                            {
                                "memory_ids": r["memory_ids"],
                                "access_id": r["id"],
                                "at": r["created_at"].isoformat(),
                                **r["payload"],
                            },
                        )
                        for r in rows
                    ]
                )
                s.delete_retrieval_logs([r["id"] for r in rows])
            sealed += len(rows)
            if len(rows) < self.batch:
                return sealed

    def seal_all(self) -> int:
        return sum(self.seal_tenant(t) for t in self.store.tenants())
