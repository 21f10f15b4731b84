"""The outbox relay: sends the queue messages that transactions recorded, after they committed.

A session close records its extraction message in the outbox, in the transaction that inserts
the session, and relays it once that transaction has committed: a worker can no longer receive a
message about a session it cannot see, and a send that fails after the commit leaves the message
pending instead of losing it. The sweep (the `outbox_relay` function, every minute; under
`memory serve`, every few seconds) sends what is still pending after a few seconds, and queues
again the sessions that made no progress for `stuck_after_s` (a message lost downstream, a worker
that died mid-extraction), and trims the messages delivered more than `retention_s` ago whose
session has finished. Delivery is at least once; the worker skips processed sessions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

from agent_memory.domain.records import utcnow
from agent_memory.observability import logger
from agent_memory.ports.messaging import Queue
from agent_memory.ports.store import MemoryStore, TenantSession

EXTRACT = "extract"


def extraction_key(session_id: str) -> str:
    """The outbox key of a session's extraction message: one message per session."""
    return f"{EXTRACT}:{session_id}"


def extraction_message(tenant_id: str, session_id: str) -> dict[str, Any]:
    """What the worker needs to find the session, and nothing more: the subject and the
    transcript's key are read from the session row, so the outbox holds no identifier to erase."""
    return {"tenant_id": tenant_id, "session_id": session_id}


@dataclass
class SweepReport:
    tenants: int = 0
    relayed: int = 0  # pending messages sent
    send_failures: int = 0  # sends that failed; those messages stay pending
    requeued: int = 0  # stuck sessions queued again
    given_up: int = 0  # stuck sessions failed after their last allowed attempt
    trimmed: int = 0  # delivered messages deleted after their retention

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class OutboxRelay:
    def __init__(
        self,
        store: MemoryStore,
        queue: Queue | None,
        *,
        relay_after_s: float = 5.0,
        stuck_after_s: float = 300.0,
        max_attempts: int = 6,
        retention_s: float = 86_400.0,
        batch_size: int = 100,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.store = store
        self.queue = queue
        self.relay_after_s = relay_after_s
        self.stuck_after_s = stuck_after_s
        self.max_attempts = max_attempts
        self.retention_s = retention_s
        self.batch_size = batch_size
        self.clock = clock

    def relay(self, tenant_id: str, dedupe_key: str) -> bool:
        """Send one recorded message now, unless it was sent or another relay is sending it.
        Called after the recording transaction committed; True when this call sent it."""
        with self.store.tenant(tenant_id) as s:
            row = s.outbox_message(dedupe_key, claim=True)
            return row is not None and self._send(s, dedupe_key, row["payload"])

    def sweep(self) -> SweepReport:
        """Every tenant: send the messages still pending after `relay_after_s`, queue again the
        sessions with no progress for `stuck_after_s`. A tenant that fails does not stop the
        others; the first failure is raised at the end, so the scheduled run reports an error."""
        report = SweepReport()
        failure: Exception | None = None
        for tenant in list(self.store.tenants()):
            report.tenants += 1
            try:
                self._sweep_tenant(tenant, report)
            except Exception as exc:
                logger.warning("outbox sweep of a tenant failed", extra={"error": type(exc).__name__})
                failure = failure or exc
        if report.relayed or report.send_failures or report.requeued or report.given_up or report.trimmed:
            logger.info("outbox swept", extra=report.as_dict())
        if failure is not None:
            raise failure
        return report

    def _sweep_tenant(self, tenant: str, report: SweepReport) -> None:
        now = self.clock()
        with self.store.tenant(tenant) as s:
            # Younger messages are left to the relay that follows their commit.
            for row in s.pending_outbox(now - timedelta(seconds=self.relay_after_s), self.batch_size):
                if self._send(s, row["dedupe_key"], row["payload"]):
                    report.relayed += 1
                else:
                    report.send_failures += 1
            for session in s.unfinished_sessions(
                now - timedelta(seconds=self.stuck_after_s), self.batch_size
            ):
                session_id = session["session_id"]
                if session["attempts"] >= self.max_attempts:
                    reason = f"no progress after {session['attempts']} extraction attempts"
                    logger.warning("stuck session failed", extra={"session_id": session_id, "reason": reason})
                    s.update_session(session_id, status="failed", failure_reason=reason)
                    report.given_up += 1
                    continue
                # Back to queued, which also restarts its age: queued again once per stuck_after_s.
                s.update_session(session_id, status="queued")
                key, message = extraction_key(session_id), extraction_message(tenant, session_id)
                s.record_outbox(key, EXTRACT, message, rearm=True)
                logger.info(
                    "stuck session queued again",
                    extra={
                        "session_id": session_id,
                        "was": session["status"],
                        "attempts": session["attempts"],
                    },
                )
                report.requeued += 1
                if not self._send(s, key, message):  # left pending: the next sweep sends it
                    report.send_failures += 1
            report.trimmed += s.trim_outbox(now - timedelta(seconds=self.retention_s), self.batch_size)

    def _send(self, s: TenantSession, dedupe_key: str, payload: dict[str, Any]) -> bool:
        """Send a message whose row this transaction holds, and record the attempt."""
        if self.queue is None:
            raise RuntimeError("the extraction queue is not configured")
        try:
            self.queue.send(payload, dedupe_id=dedupe_key)
        except Exception as exc:  # whatever the queue client raises: the message stays pending
            logger.warning(
                "outbox send failed; the message stays pending", extra={"error": type(exc).__name__}
            )
            s.mark_outbox(dedupe_key, sent=False, error=type(exc).__name__[:200])
            return False
        s.mark_outbox(dedupe_key, sent=True)
        return True
