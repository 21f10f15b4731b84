"""Subject erasure (GDPR Art. 17, DEL-01): the steps of `domain.erasure_steps`,
each idempotent and safe to re-run, verified before anything is called done.

A legal hold wins (GDPR Art. 17(3)(e): data needed for legal claims): records under a hold (their
own, or their subject's) are kept with their audit, verification counts what is left apart from
them, and the receipt lists them as `retained_under_hold` (hold id and count, no content). A held
subject keeps its sessions and transcripts too. Releasing the hold starts a new erasure that
completes the first (`completes_erasure_id`), with a receipt of its own.

In AWS a Step Functions state machine runs the steps (one Lambda task each);
locally `LocalErasureRunner` runs the same list with the same retry policy.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agent_memory.domain.audit import erasure_reference_digest
from agent_memory.domain.deletion_registry import ERASURE
from agent_memory.domain.enums import EventType, Role
from agent_memory.domain.erasure_steps import ERASURE_DEADLINE_HOURS, ERASURE_STEPS, ErasureStep, step_names
from agent_memory.domain.errors import NotFound, Unavailable
from agent_memory.domain.records import Principal, new_id, utcnow
from agent_memory.domain.sanitize import MaskedText
from agent_memory.observability import logger
from agent_memory.ports.deletion_registry import DeletionRegistry
from agent_memory.ports.messaging import ObjectStore
from agent_memory.ports.rows import ErasureRow
from agent_memory.ports.store import MemoryStore, NewEvent
from agent_memory.services.authorization import require_mutation, require_read
from agent_memory.services.sessions import subject_prefix

VERIFIED_LAYERS = (
    "records",
    "embeddings",
    "fulltext",
    "derived",
    "cache",
    "objects",
    "working",
    "extraction_reports",
    "free_text",
)


class ErasureRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: MaskedText = Field(min_length=1, max_length=100)
    request_reference: MaskedText | None = Field(default=None, max_length=200)


class ErasureNotClean(Exception):
    """Verification found data left in some layer; the step is retried, then the erasure fails."""


class ErasureService:
    def __init__(
        self,
        store: MemoryStore,
        objects: ObjectStore | None,
        *,
        start_workflow: Callable[[dict[str, str]], None] | None = None,
        invalidate_caches: Callable[[str, str], int] | None = None,
        clock: Callable[[], datetime] = utcnow,
        registry: DeletionRegistry | None = None,
    ) -> None:
        self.store = store
        self.objects = objects
        self.registry = registry
        self.start_workflow = start_workflow
        self.invalidate_external_caches = invalidate_caches or (lambda tenant, subject: 0)
        self.clock = clock

    # -- API ---------------------------------------------------------------------
    def request(self, principal: Principal, subject_id: str, body: ErasureRequest) -> dict[str, Any]:
        require_mutation(principal, Role.PRIVACY_OFFICER, action="request erasure")
        return self._start(principal, subject_id, body)

    def erase_now(self, principal: Principal, subject_id: str, body: ErasureRequest) -> dict[str, Any]:
        """Request and run an erasure here, to the end, with each step's retry policy (no
        workflow): the deletion registry's replay, which must be done before the service answers."""
        require_mutation(principal, Role.PRIVACY_OFFICER, action="request erasure")
        started = self._start(principal, subject_id, body, run_workflow=False)
        LocalErasureRunner(self).run(
            {"erasure_id": started["erasure_id"], "tenant_id": principal.tenant_id, "subject_id": subject_id}
        )
        return self.status(principal, str(started["erasure_id"]))

    def complete_after_release(self, principal: Principal, subject_id: str, hold_id: str) -> str | None:
        """A hold was released: when the subject's latest erasure kept records under it, start the
        erasure that completes it (a new erasure id and receipt naming the first). Its id, or None."""
        with self.store.tenant(principal.tenant_id) as s:
            latest = s.latest_erasure(subject_id)
        if latest is None:
            return None
        retained = (latest["receipt"] or {}).get("retained_under_hold") or []
        if not any(r.get("hold_id") == hold_id for r in retained):
            return None
        started = self._start(
            principal,
            subject_id,
            ErasureRequest(reason="legal_hold_released", request_reference=latest["request_reference"]),
            completes=latest["erasure_id"],
            # a verified erasure keeps its request's reference only as a digest: the same request
            reference_digest=latest.get("request_reference_sha256"),
        )
        return str(started["erasure_id"])

    def _start(
        self,
        principal: Principal,
        subject_id: str,
        body: ErasureRequest,
        *,
        completes: str | None = None,
        reference_digest: str | None = None,
        run_workflow: bool = True,
    ) -> dict[str, Any]:
        now = self.clock()
        with self.store.tenant(principal.tenant_id) as s:
            s.lock_subject_exclusive(subject_id)
            if body.request_reference and completes is None:
                # Idempotency belongs to the request, not to the subject: the same data-subject
                # request sent twice answers with its first erasure; any other request runs again,
                # since data may have arrived since the last one (a replayed session, a paraphrase).
                earlier = s.erasure_by_reference(
                    subject_id, erasure_reference_digest(subject_id, body.request_reference)
                )
                if earlier is not None:
                    return self._view(earlier, now) | {"duplicate_of_earlier_request": True}
            # A subject this tenant has never held gets a verified zero receipt, whether or not some
            # other tenant holds the same id: the answer must not tell the two apart.
            erasure_id = new_id("era")
            steps = [{"name": n, "status": "pending", "count": None, "attempts": 0} for n in step_names()]
            s.create_erasure(
                erasure_id=erasure_id,
                subject_id=subject_id,
                reason=body.reason,
                request_reference=body.request_reference,
                request_reference_sha256=(
                    erasure_reference_digest(subject_id, body.request_reference)
                    if body.request_reference
                    else reference_digest
                ),
                requested_by=principal.sub,
                steps=steps,
                deadline=now + timedelta(hours=ERASURE_DEADLINE_HOURS),
                completes_erasure_id=completes,
            )
            s.append_events(
                [
                    NewEvent(
                        EventType.ERASURE_REQUESTED.value,
                        principal.sub,
                        None,
                        subject_id,
                        "erasure_requested",
                        # the caller's words go beside the chain (erased with the subject)
                        {
                            "erasure_id": erasure_id,
                            "reason": body.reason,
                            "request_reference": body.request_reference,
                            **({"completes_erasure_id": completes} if completes else {}),
                        },
                    )
                ]
            )
            row = _required(s.get_erasure(erasure_id), erasure_id)
        if run_workflow and self.start_workflow is not None:
            self.start_workflow(
                {"erasure_id": erasure_id, "tenant_id": principal.tenant_id, "subject_id": subject_id}
            )
        return self._view(row, now)

    def status(self, principal: Principal, erasure_id: str) -> dict[str, Any]:
        require_read(principal, Role.PRIVACY_OFFICER)
        with self.store.tenant(principal.tenant_id) as s:
            row = _required(s.get_erasure(erasure_id), erasure_id)
            completed_by = s.completing_erasures(erasure_id)
        view = self._view(row, self.clock())
        if completed_by:
            view["completed_by"] = completed_by
        return view

    @staticmethod
    def _view(row: ErasureRow, now: datetime) -> dict[str, Any]:
        view: dict[str, Any] = {
            "erasure_id": row["erasure_id"],
            "subject_id": row["subject_id"],
            "status": row["status"],
            "deadline": row["deadline"].isoformat(),
            "deadline_passed": row["status"] == "running" and now > row["deadline"],
            "steps": row["steps"],
            "receipt": row["receipt"],
        }
        if row.get("completes_erasure_id"):
            view["completes_erasure_id"] = row["completes_erasure_id"]
        if row["failure_reason"]:
            view["reason"] = row["failure_reason"]
        return view

    # -- steps -------------------------------------------------------------------
    def run_step(self, tenant_id: str, erasure_id: str, step: str) -> dict[str, Any]:
        """Run one named step. Idempotent: re-running after a crash redoes the same work."""
        handler = getattr(self, f"_step_{step}", None)
        if step not in step_names() or handler is None:
            raise ValueError(f"unknown erasure step {step!r}")
        with self.store.tenant(tenant_id) as s:
            req = _required(s.get_erasure(erasure_id), erasure_id)
        if req["status"] == "verified":
            return {"step": step, "skipped": "already verified", "clean": True}
        self._mark(tenant_id, erasure_id, step, "running")
        try:
            result: dict[str, Any] = handler(tenant_id, req)
        except Exception as exc:
            self._mark(tenant_id, erasure_id, step, "retrying", error=type(exc).__name__)
            raise
        self._mark(tenant_id, erasure_id, step, "succeeded", **result)
        return {"step": step, **result}

    def fail(self, tenant_id: str, erasure_id: str, step: str, reason: str) -> None:
        """Terminal failure after retries: loud (status, event, metric in the caller), never 'verified'."""
        with self.store.tenant(tenant_id) as s:
            req = _required(s.get_erasure(erasure_id, for_update=True), erasure_id)
            steps = _set_step(req["steps"], step, status="failed", error=reason[:200])
            s.update_erasure(
                erasure_id,
                status="failed",
                steps=steps,
                failure_reason=f"step {step} failed: {reason}"[:500],
            )
            s.append_events(
                [
                    NewEvent(
                        EventType.DELETION_FAILED.value,
                        "erasure-workflow",
                        None,
                        req["subject_id"],
                        f"step_{step}_failed",
                        {"erasure_id": erasure_id, "error": reason[:200]},
                    )
                ]
            )
        logger.error("erasure failed", extra={"erasure_id": erasure_id, "step": step})

    def _mark(self, tenant_id: str, erasure_id: str, step: str, status: str, **extra: Any) -> None:
        with self.store.tenant(tenant_id) as s:
            req = _required(s.get_erasure(erasure_id, for_update=True), erasure_id)
            s.update_erasure(erasure_id, steps=_set_step(req["steps"], step, status=status, **extra))

    def _step_resolve_lineage(self, tenant_id: str, req: ErasureRow) -> dict[str, Any]:
        # First, before anything is removed: the registry outside the database that a restore
        # replays. When it cannot be written the step fails (and is retried, then the erasure
        # fails): an erasure a restore could undo is never reported verified.
        if self.registry is not None:
            self.registry.append(
                kind=ERASURE,
                tenant_id=tenant_id,
                ref=req["erasure_id"],
                subject_digest=self.registry.subject_digest(tenant_id, req["subject_id"]),
            )
        with self.store.tenant(tenant_id) as s:
            lin = s.subject_lineage(req["subject_id"])
            keys = sorted(
                set(lin["lineage"]) | set(lin["sessions"]) | {f"transcript:{k}" for k in lin["transcripts"]}
            )
            s.update_erasure(req["erasure_id"], lineage_keys=keys)
        return {"count": lin["records"], "lineage_keys": len(keys)}

    def _step_tombstone(self, tenant_id: str, req: ErasureRow) -> dict[str, Any]:
        with self.store.tenant(tenant_id) as s:
            lin = s.subject_lineage(req["subject_id"])
            n = s.tombstone_subject(
                req["subject_id"],
                req["erasure_id"],
                lin["hashes"],
                req["lineage_keys"],
            )
        return {"count": n}

    def _step_purge_index(self, tenant_id: str, req: ErasureRow) -> dict[str, Any]:
        with self.store.tenant(tenant_id) as s:
            n = s.purge_subject_index(req["subject_id"], req["lineage_keys"])
        return {"count": n}

    def _step_purge_derived(self, tenant_id: str, req: ErasureRow) -> dict[str, Any]:
        with self.store.tenant(tenant_id) as s:
            counts = s.purge_subject_records(req["subject_id"], req["lineage_keys"])
            # Working memory of the subject's open sessions, live or expired (the same transaction
            # holds the subject's exclusive lock: no working write interleaves).
            counts["working"] = s.purge_subject_working(req["subject_id"])
            # What people typed about the subject: its audit events' free text (reasons, evidence
            # and request references; the chain keeps only salted digests) and a hold's reason.
            counts["free_text"] = s.purge_subject_free_text(req["subject_id"])
            s.append_events(
                [
                    NewEvent(
                        EventType.DELETED.value,
                        "erasure-workflow",
                        None,
                        req["subject_id"],
                        "erasure",
                        {"erasure_id": req["erasure_id"], **counts},
                    )
                ]
            )
        return {"count": counts["records"] + counts["derived"], **counts}

    def _step_purge_objects(self, tenant_id: str, req: ErasureRow) -> dict[str, Any]:
        if self.objects is None:
            return {"count": 0}
        with self.store.tenant(tenant_id) as s:
            if s.subject_held(req["subject_id"]):
                return {"count": 0, "held": True}  # a held subject's transcripts are kept with it
        n = self.objects.delete_prefix(subject_prefix(tenant_id, req["subject_id"]))
        for key in req["lineage_keys"]:
            if key.startswith("transcript:"):
                self.objects.delete(key.removeprefix("transcript:"))
        return {"count": n}

    def _step_invalidate_caches(self, tenant_id: str, req: ErasureRow) -> dict[str, Any]:
        with self.store.tenant(tenant_id) as s:
            n = s.purge_subject_caches(req["subject_id"])
        n += self.invalidate_external_caches(tenant_id, req["subject_id"])
        return {"count": n}

    def _step_verify(self, tenant_id: str, req: ErasureRow) -> dict[str, Any]:
        with self.store.tenant(tenant_id) as s:
            found = s.verify_subject_erased(req["subject_id"], req["lineage_keys"])
            found["working"] = s.count_subject_working(req["subject_id"])
            held = s.subject_held(req["subject_id"])
            found["free_text"] = s.count_subject_free_text(req["subject_id"])
        found["objects"] = (
            self.objects.count_prefix(subject_prefix(tenant_id, req["subject_id"]))
            if self.objects and not held
            else 0
        )
        left = {k: v for k, v in found.items() if v}
        if left:
            raise ErasureNotClean(f"data left in: {sorted(left)}")
        return {"count": 0, "verification": {k: found.get(k, 0) for k in VERIFIED_LAYERS}, "clean": True}

    def _step_receipt(self, tenant_id: str, req: ErasureRow) -> dict[str, Any]:
        now = self.clock()
        with self.store.tenant(tenant_id) as s:
            current = _required(s.get_erasure(req["erasure_id"], for_update=True), req["erasure_id"])
            counts = {st["name"]: st for st in current["steps"]}
            verify = counts.get("verify", {})
            if verify.get("status") != "succeeded":
                raise ErasureNotClean("receipt refused: verification has not succeeded")
            derived = counts["purge_derived"].get("derived") or 0
            retained = s.retained_under_hold(req["subject_id"])
            receipt = {
                "erasure_id": req["erasure_id"],
                "subject_id": req["subject_id"],
                # The requester's words may name the subject: the receipt names the request by
                # its reference's digest, and the row forgets the reason and the reference.
                "request_reference": None,
                "request_reference_sha256": current["request_reference_sha256"],
                "records": counts["resolve_lineage"].get("count") or 0,
                "embeddings": counts["purge_index"].get("count") or 0,
                "derived": derived,
                "objects": counts["purge_objects"].get("count") or 0,
                "working": counts["purge_derived"].get("working") or 0,
                "tombstones": counts["tombstone"].get("count") or 0,
                "lineage_keys": len(current["lineage_keys"]),
                "requested_at": current["created_at"].isoformat(),
                "verified_at": now.isoformat(),
                "verification": {k: 0 for k in VERIFIED_LAYERS},
                # Kept under a legal hold (GDPR Art. 17(3)(e)), by hold: erased once it is released.
                "retained_under_hold": retained,
            }
            if current.get("completes_erasure_id"):
                receipt["completes_erasure_id"] = current["completes_erasure_id"]
            steps = _set_step(current["steps"], "receipt", status="succeeded", count=1)
            s.update_erasure(
                req["erasure_id"],
                status="verified",
                receipt=receipt,
                steps=steps,
                completed_at=now,
                reason=None,
                request_reference=None,
            )
            s.append_events(
                [
                    NewEvent(
                        EventType.ERASURE_VERIFIED.value,
                        "erasure-workflow",
                        None,
                        req["subject_id"],
                        "verified",
                        {
                            "erasure_id": req["erasure_id"],
                            **{k: receipt[k] for k in ("records", "embeddings", "derived", "objects")},
                            "retained_under_hold": retained,
                        },
                    )
                ]
            )
        return {"count": 1}


def _required(row: ErasureRow | None, erasure_id: str) -> ErasureRow:
    if row is None:
        raise NotFound(f"erasure {erasure_id} not found")
    return row


def _set_step(steps: list[dict[str, Any]], name: str, **fields: Any) -> list[dict[str, Any]]:
    out = []
    for st in steps:
        st = dict(st)
        if st["name"] == name:
            if fields.get("status") == "running":
                st["attempts"] = int(st.get("attempts") or 0) + 1
            st.update({k: v for k, v in fields.items() if v is not None or k == "count"})
        out.append(st)
    return out


class LocalErasureRunner:
    """Runs the erasure steps in order with each step's retry policy, as Step Functions does."""

    def __init__(
        self, service: ErasureService, *, sleep: Callable[[float], None] = time.sleep, time_scale: float = 1.0
    ) -> None:
        self.service = service
        self.sleep = sleep
        self.time_scale = time_scale
        self._threads: list[threading.Thread] = []
        self._threads_lock = threading.Lock()

    def run(self, job: dict[str, str]) -> str:
        tenant, erasure_id = job["tenant_id"], job["erasure_id"]
        for step in ERASURE_STEPS:
            error = self._run_with_retries(tenant, erasure_id, step)
            if error is not None:
                self.service.fail(tenant, erasure_id, step.name, error)
                return "failed"
        return "verified"

    def _run_with_retries(self, tenant: str, erasure_id: str, step: ErasureStep) -> str | None:
        """As Step Functions does: an outage (`Unavailable`) counts against the step's outage
        policy, any other error against its own policy; the first policy exhausted fails it."""
        policies = {"error": step.retry, "outage": step.outage_retry}
        attempts = {"error": 0, "outage": 0}
        delays = {k: float(p.interval_seconds) for k, p in policies.items()}
        while True:
            try:
                self.service.run_step(tenant, erasure_id, step.name)
                return None
            except Exception as exc:  # every failure is retried per policy, then reported
                kind = "outage" if isinstance(exc, Unavailable) else "error"
                attempts[kind] += 1
                logger.warning(
                    "erasure step failed",
                    extra={"step": step.name, "attempt": attempts[kind], "error": type(exc).__name__},
                )
                if attempts[kind] >= policies[kind].max_attempts:
                    return f"{type(exc).__name__}: {exc}"[:300]
                self.sleep(delays[kind] * self.time_scale)
                delays[kind] *= policies[kind].backoff_rate

    def start_in_background(self, job: dict[str, str]) -> threading.Thread:
        thread = threading.Thread(
            target=self.run, args=(job,), name=f"erasure-{job['erasure_id']}", daemon=True
        )
        with self._threads_lock:
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()
        return thread

    def wait(self, timeout_s: float = 30.0) -> None:
        """Let erasures in flight finish before the database goes away (shutdown, tests)."""
        deadline = time.monotonic() + timeout_s
        with self._threads_lock:
            threads = list(self._threads)
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        running = [t.name for t in threads if t.is_alive()]
        if running:  # they will fail on the closed pool and stay 'running' until requested again
            logger.error("erasures still running at shutdown", extra={"threads": running})
