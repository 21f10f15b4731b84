"""Refusals and failed retrievals in the audit log (the product requirements' event list): auditors see
attempts, not only successes.

What is recorded, in the tenant's hash chain:
- `memory_authorization_denied` for every 401 or 403 whose tenant is genuine: a 403 (the caller's
  token was valid; its roles or its subject binding were not enough), and a 401 for a token
  whose signature verified but whose claims were refused (expired, an unknown role, a malformed
  binding). A token with no valid signature names no tenant anyone can trust: there is no chain
  to write to, and it is only counted (the RequestRefused_unauthenticated metric) and logged.
- `retrieval_failed` for a retrieval that failed on the service's side (a 5xx: an outage, an
  unexpected error in the broker).

Each event names who (the token's subject), the route template (never the concrete path, which
holds ids), the status, the refusal's code and its reason, and the subject the request named (in
its path, query or body: the event's `subject_id`, so a subject's audit trail shows the attempts on
it); never content.
Identical events (same tenant, actor, route, reason) are written at most once per the tenant's
`refusal_audit_window_seconds`; the ones in between are counted in the database (so the bound holds
across every function instance) and reported as `repeated` by the next event of the same key.

Recording never changes the answer: a failure to record is logged and counted, not raised.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from aws_lambda_powertools.metrics import MetricUnit

from agent_memory.domain.enums import EventType
from agent_memory.domain.records import utcnow
from agent_memory.observability import logger, metrics
from agent_memory.ports.store import MemoryStore, NewEvent
from agent_memory.services.policies import PolicyRegistry

REASON_MAX_CHARS = 300
# Counted when recording itself failed (the database is down, say): the refusal still answered.
UNRECORDED_METRIC = "RefusalNotRecorded"


@dataclass(frozen=True)
class Refusal:
    """One refusal or failure as the HTTP edge saw it."""

    event_type: EventType
    tenant_id: str
    actor: str
    route: str  # "POST /v1/memories/{memory_id}/approve": the template, no ids
    status: int
    code: str
    reason: str
    subject_id: str | None = None  # the subject the request named, when it named a valid one


class RefusalLog:
    def __init__(
        self, store: MemoryStore, policies: PolicyRegistry, clock: Callable[[], datetime] = utcnow
    ) -> None:
        self.store = store
        self.policies = policies
        self.clock = clock

    def record(self, refusal: Refusal) -> bool:
        """Count the refusal, and write its event when one is due. True when an event was
        written. Never raises."""
        try:
            return self._record(refusal)
        except Exception as exc:
            logger.warning(
                "refusal not recorded",
                extra={"event_type": refusal.event_type.value, "error": type(exc).__name__},
            )
            metrics.add_metric(name=UNRECORDED_METRIC, unit=MetricUnit.Count, value=1)
            return False

    def _record(self, refusal: Refusal) -> bool:
        window = timedelta(seconds=self.policies.for_tenant(refusal.tenant_id).refusal_audit_window_seconds)
        reason = refusal.reason[:REASON_MAX_CHARS]
        # The service's own record, not the caller's act: written outside any subject binding.
        with self.store.tenant(refusal.tenant_id, subjects=None) as s:
            repeated = s.count_refusal(
                event_type=refusal.event_type.value,
                actor=refusal.actor,
                route=refusal.route,
                reason=reason,
                at=self.clock(),
                window=window,
            )
            if repeated is None:
                return False
            s.append_events(
                [
                    NewEvent(
                        refusal.event_type.value,
                        refusal.actor,
                        None,
                        refusal.subject_id,
                        reason,
                        {
                            "route": refusal.route,
                            "status": refusal.status,
                            "code": refusal.code,
                            # identical refusals since this key's previous event, not written
                            "repeated": repeated,
                        },
                    )
                ]
            )
        return True
