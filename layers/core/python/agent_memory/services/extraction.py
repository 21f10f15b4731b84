"""The extraction worker: one queued session -> extractor -> write gateway.

A message whose session cannot be seen is redelivered (partial batch failure), never dropped;
on its last delivery it is given up, and the outbox sweep queues the session again should it
turn up stuck. Redelivery is safe: a processed session is skipped, and every candidate is
written with an idempotency key derived from the session and its position.
Two deliveries at once both extract, but only the first to finish records the
outcome and its audit events. A session's candidates are admitted together, in one
transaction (the gateway's batched path), each decided as a single write would be.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from agent_memory.domain.enums import Decision, EventType, Role
from agent_memory.domain.errors import Unavailable
from agent_memory.domain.extraction import (
    MAX_TRANSCRIPT_BYTES,
    CandidateMemory,
    ExtractionResult,
    ReportedStatement,
    SkippedStatement,
    StatementDecision,
    Transcript,
    skipped_decision,
)
from agent_memory.domain.hashing import text_hash
from agent_memory.domain.records import MemoryWrite, Principal, Source, SourceSpan, WriteResult
from agent_memory.domain.sensitive import restrict_sensitive
from agent_memory.domain.statement_rules import SYSTEM_OF_RECORD_CLAIM, apply_statement_rules, statement_text
from agent_memory.observability import logger
from agent_memory.ports.extractor import ExtractionFailed, Extractor
from agent_memory.ports.messaging import ObjectMissing, ObjectStore, ObjectTooLarge
from agent_memory.ports.rows import SessionRow
from agent_memory.ports.store import MemoryStore, NewEvent
from agent_memory.ports.system_of_record import SystemOfRecord
from agent_memory.services.sor_claims import (
    LIVE_VALUE_UNAVAILABLE,
    ClaimVerdicts,
    judge_claims,
    record_claims,
)
from agent_memory.services.write_gateway import WriteGateway

_OUTCOME_KEYS = (
    "admitted",
    "pending_approval",
    "contested",
    "quarantined",
    "rejected",
    "duplicate",
    "not_stored",
)


class PermanentFailure(Exception):
    """Retrying will not help (bad model output, missing or oversized transcript)."""


class SessionNotVisible(Exception):
    """The message's session row cannot be seen (yet): SQS is to deliver the message again."""


# MemoryWrite fields filled from the session rather than from the candidate.
_FROM_THE_SESSION = frozenset(
    {"subject_id", "ticket_id", "session_id", "idempotency_key", "lineage_keys", "source"}
)


class ExtractionWorker:
    def __init__(
        self,
        store: MemoryStore,
        objects: ObjectStore | None,
        extractor: Extractor | Callable[[], Extractor],
        gateway: WriteGateway,
        *,
        max_receive_count: int,
        system_of_record: SystemOfRecord | None = None,
    ) -> None:
        self.system_of_record = system_of_record
        self.store = store
        self.objects = objects
        self._extractor = extractor
        self.gateway = gateway
        self.max_receive_count = max_receive_count

    @property
    def extractor(self) -> Extractor:
        """Built on first use: only the extraction worker pays for loading an extractor."""
        if callable(self._extractor) and not hasattr(self._extractor, "extract"):
            self._extractor = self._extractor()
        return self._extractor  # type: ignore[return-value]

    def process(self, message: dict[str, Any], *, receive_count: int = 1) -> dict[str, Any]:
        """Process one queue message. Raises to ask for redelivery; returns the outcome otherwise."""
        tenant_id, session_id = str(message["tenant_id"]), str(message["session_id"])
        with self.store.tenant(tenant_id) as s:
            row = s.get_session(session_id, for_update=True)
            if row is None:
                # Not committed yet, or erased: never drop the message while it may still appear.
                if receive_count < self.max_receive_count:
                    raise SessionNotVisible("the queued session is not visible yet; asking for redelivery")
                logger.warning(
                    "queued session still not found on the last delivery; giving up the message",
                    extra={"session_id": session_id, "receive_count": receive_count},
                )
                return {"status": "missing"}
            if row["status"] in ("processed", "failed"):
                return {"status": row["status"], "skipped": True}
            s.update_session(session_id, status="processing", attempts=row["attempts"] + 1)
        try:
            outcome = self._extract_and_write(tenant_id, session_id, row)
        except PermanentFailure as exc:
            self._fail(tenant_id, session_id, str(exc))
            return {"status": "failed", "reason": str(exc)}
        except Unavailable:
            # A database outage is not the session's fault: never `failed` for it, whatever the
            # receive count. Back to queued if the database answers again, and redelivered (from
            # the dead-letter queue once the outage is over, if it outlasted the receives).
            with contextlib.suppress(Unavailable), self.store.tenant(tenant_id) as s:
                s.update_session(session_id, status="queued")
            raise
        except Exception as exc:
            if receive_count >= self.max_receive_count:
                self._fail(
                    tenant_id, session_id, f"gave up after {receive_count} attempts: {type(exc).__name__}"
                )
            else:
                with self.store.tenant(tenant_id) as s:
                    s.update_session(session_id, status="queued")
            raise
        return outcome

    def _fail(self, tenant_id: str, session_id: str, reason: str) -> None:
        logger.warning("session extraction failed", extra={"session_id": session_id, "reason": reason})
        with self.store.tenant(tenant_id) as s:
            current = s.get_session(session_id, for_update=True)
            if current is not None and current["status"] == "processed":
                return  # another delivery of the same message finished it meanwhile
            s.update_session(session_id, status="failed", failure_reason=reason[:500])

    def _extract_and_write(self, tenant_id: str, session_id: str, row: SessionRow) -> dict[str, Any]:
        transcript = self._transcript(row)
        try:
            result = self.extractor.extract(transcript)
        except ExtractionFailed as exc:
            raise PermanentFailure(f"extractor output rejected: {exc}") from exc
        policy = self.gateway.policies.for_tenant(tenant_id)
        slot_of_field = {f: slot for slot, f in policy.sor_slot_fields.items()}
        # The form and speaker rules, whatever the extractor: questions, agents' sentences, and
        # statements about what the system of record owns (checked against its live value below).
        result = apply_statement_rules(result, transcript, slot_of_field)
        # The product requirements: a sensitive personal detail takes the restricted path rather than being dropped.
        if policy.restrict_sensitive_details:
            result = restrict_sensitive(result, transcript)
        claims = [s for s in result.skipped if s.reason == SYSTEM_OF_RECORD_CLAIM and s.field]
        verdicts = self._judge_claims(tenant_id, transcript, claims)
        principal = Principal(
            sub=f"extractor:{self.extractor.name}", tenant_id=tenant_id, roles=frozenset({Role.AGENT})
        )
        counts, memory_ids, invalid, written = self._admit(principal, transcript, row, result)
        if invalid:  # field names only: never the candidate's text
            logger.warning(
                "candidates refused", extra={"session_id": session_id, "fields": [f for _, f in invalid]}
            )
        counts["not_stored"] = len(result.skipped) + len(invalid)
        outcome = {k: counts.get(k, 0) for k in _OUTCOME_KEYS}
        with self.store.tenant(tenant_id) as s:
            # SQS may hand the same message to two workers at once: the one that finishes second
            # must not record the outcome (and its audit events, which no key deduplicates) again.
            current = s.get_session(session_id, for_update=True)
            if current is not None and current["status"] == "processed":
                return {"status": "processed", "skipped": True}
            claim_ids = record_claims(
                s,
                principal.sub,
                transcript.subject_id,
                [(c.field or "", o) for c, o in zip(claims, verdicts.outcomes, strict=True)],
                slot_of_field,
                verdicts.read_at,
            )
            report = extraction_report(
                transcript,
                result,
                written,
                dict(invalid),
                dict(zip(map(id, claims), zip(verdicts.outcomes, claim_ids, strict=True), strict=True)),
            )
            # A refused candidate has no record to carry a rejection event: the audit trail gets
            # one anyway, with where it came from and the field that refused it (never its text).
            s.append_events(
                [
                    NewEvent(
                        EventType.REJECTED.value,
                        principal.sub,
                        None,
                        transcript.subject_id,
                        "malformed_candidate",
                        {"session_id": session_id, "candidate": index, "field": field},
                    )
                    for index, field in invalid
                ]
                + [report_event(principal.sub, transcript, report)]
            )
            s.save_extraction_report(
                session_id, transcript.subject_id, [r.model_dump(mode="json") for r in report]
            )
            s.update_session(
                session_id,
                status="processed",
                outcome=outcome,
                memory_ids=sorted(set(memory_ids)),
                extractor=f"{self.extractor.name}/{self.extractor.version}",
            )
        logger.info("session processed", extra={"session_id": session_id, **outcome})
        return {"status": "processed", **outcome}

    def _judge_claims(
        self, tenant_id: str, transcript: Transcript, claims: list[SkippedStatement]
    ) -> ClaimVerdicts:
        pairs = [(statement_text(transcript, c.span), c.field or "") for c in claims]
        if self.system_of_record is None:
            return ClaimVerdicts([LIVE_VALUE_UNAVAILABLE] * len(pairs), None)
        return judge_claims(self.system_of_record, tenant_id, transcript.subject_id, pairs)

    def _transcript(self, row: SessionRow) -> Transcript:
        """The session's stored transcript; missing, too large or malformed is a permanent failure."""
        if self.objects is None:
            raise RuntimeError("object store not configured")
        key = row["transcript_key"]
        if key is None:  # cleared when the transcript's retention ended
            raise PermanentFailure("transcript object missing (expired or erased)")
        try:
            raw = self.objects.get_json(key, max_bytes=MAX_TRANSCRIPT_BYTES + 65_536)
        except ObjectTooLarge as exc:
            raise PermanentFailure(f"transcript too large: {exc}") from exc
        except ObjectMissing as exc:
            raise PermanentFailure("transcript object missing (expired or erased)") from exc
        try:
            return Transcript.model_validate(raw)
        except ValueError as exc:
            raise PermanentFailure("stored transcript is malformed") from exc

    def _admit(
        self, principal: Principal, transcript: Transcript, row: SessionRow, result: ExtractionResult
    ) -> tuple[
        Counter[str], list[str], list[tuple[int, str]], dict[int, tuple[CandidateMemory, WriteResult]]
    ]:
        """Every candidate through the gateway in one batch: the decisions counted, the ids of the
        records written, (candidate index, field) for each candidate refused, and each written
        candidate's decision by its index."""
        counts: Counter[str] = Counter()
        memory_ids: list[str] = []
        candidates = list(result.candidates) + ([result.summary] if result.summary else [])
        writes: list[MemoryWrite] = []
        written: list[int] = []  # the candidate index of each write
        invalid: list[tuple[int, str]] = []  # (candidate index, the field that refused it)
        decided: dict[int, tuple[CandidateMemory, WriteResult]] = {}
        for index, cand in enumerate(candidates):
            try:
                writes.append(self._to_write(transcript, row, cand, index))
                written.append(index)
            except ValidationError as exc:
                field = ".".join(str(p) for p in exc.errors()[0]["loc"]) or "candidate"
                if field.split(".")[0] in _FROM_THE_SESSION:  # every candidate would fail alike
                    raise PermanentFailure(f"session cannot be stored: {field}") from exc
                invalid.append((index, _field_name(field)))  # one unusable candidate never fails the others
        for index, decision in zip(
            written, self.gateway.write_many(principal, writes, refuse_invalid=True), strict=True
        ):
            if decision.refused is not None:
                invalid.append((index, _field_name(decision.refused)))
                continue
            decided[index] = (candidates[index], decision)
            counts[decision.decision.value] += 1
            if decision.memory is not None and decision.decision is not Decision.REJECTED:
                memory_ids.append(decision.memory.id)
        invalid.sort()
        return counts, memory_ids, invalid, decided

    @staticmethod
    def _to_write(
        transcript: Transcript, row: Mapping[str, Any], cand: CandidateMemory, index: int
    ) -> MemoryWrite:
        occurred: datetime = transcript.occurred_at
        return MemoryWrite(
            subject_id=transcript.subject_id,
            type=cand.type,
            category=cand.category,
            slot=cand.slot,
            content=cand.content,
            value=cand.value,
            source=Source(
                kind=cand.source_kind, system="session", reference=transcript.session_id, span=cand.span
            ),
            ticket_id=transcript.ticket_id,
            session_id=transcript.session_id,
            effective_at=occurred,
            confidence=cand.confidence,
            confidence_basis=cand.confidence_basis,
            idempotency_key=f"extract:{transcript.session_id}:{index}:{text_hash(cand.content)[:16]}",
            lineage_keys=[f"session:{transcript.session_id}", f"transcript:{row['transcript_key']}"],
            extractor=cand.extractor,
            extractor_version=cand.extractor_version,
            actor=cand.speaker.value,
            flags=["untrusted_instruction"] if "untrusted_instruction" in cand.flags else [],
        )


_GATEWAY_DECISIONS = {
    Decision.ADMITTED: StatementDecision.ADMITTED,
    Decision.PENDING_APPROVAL: StatementDecision.PENDING_APPROVAL,
    Decision.CONTESTED: StatementDecision.PENDING_APPROVAL,  # held for a reviewer beside the record
    Decision.QUARANTINED: StatementDecision.QUARANTINED,
    Decision.REJECTED: StatementDecision.NOT_STORED,
    Decision.DUPLICATE: StatementDecision.DUPLICATE,
}


def extraction_report(
    transcript: Transcript,
    result: ExtractionResult,
    decided: Mapping[int, tuple[CandidateMemory, WriteResult]],
    invalid: Mapping[int, str],
    claims: Mapping[int, tuple[str, str | None]],
) -> list[ReportedStatement]:
    """Every statement of the session with what became of it, in transcript order (the episode
    summary is not a statement: it is reported by the session's outcome)."""
    statements: list[ReportedStatement] = []

    def add(
        span: SourceSpan, decision: StatementDecision, reason: str, score: float | None, **extra: Any
    ) -> None:
        statements.append(
            ReportedStatement(
                turn=span.turn,
                start=span.start,
                end=span.end,
                speaker=transcript.turns[span.turn].speaker,
                text=statement_text(transcript, span),
                decision=decision,
                reason=reason,
                score=None if score is None else round(score, 4),
                **extra,
            )
        )

    for index, cand in enumerate(result.candidates):
        kind = {"type": cand.type.value, "slot": cand.slot}
        if index in invalid:
            add(
                cand.span,
                StatementDecision.NOT_STORED,
                f"malformed_candidate:{invalid[index]}",
                cand.confidence,
                **kind,
            )
            continue
        if index not in decided:
            continue
        _, written = decided[index]
        memory = written.memory if written.decision is not Decision.REJECTED else None
        reason = written.reasons[0] if written.reasons else f"stored_as_{cand.type.value}"
        add(
            cand.span,
            _GATEWAY_DECISIONS[written.decision],
            reason,
            cand.confidence,
            memory_id=memory.id if memory is not None else None,
            sensitivity=written.memory.sensitivity.value if written.memory is not None else None,
            **kind,
        )
    for skip in result.skipped:
        if id(skip) in claims:
            outcome, record_id = claims[id(skip)]
            add(skip.span, StatementDecision.NOT_STORED, outcome, skip.score, memory_id=record_id)
        else:
            add(skip.span, skipped_decision(skip.reason), skip.reason, skip.score)
    statements.sort(key=lambda r: (r.turn, r.start))
    return statements


def report_event(actor: str, transcript: Transcript, report: list[ReportedStatement]) -> NewEvent:
    """The audit's view of one extraction: decisions counted, never a statement."""
    counts = Counter(r.decision.value for r in report)
    return NewEvent(
        EventType.SESSION_EXTRACTED.value,
        actor,
        None,
        transcript.subject_id,
        "session_extracted",
        {
            "session_id": transcript.session_id,
            "statements": len(report),
            "decisions": dict(sorted(counts.items())),
        },
    )


def _field_name(field: str) -> str:
    """The field that refused a candidate, as logged and audited: a path into `value` names keys the
    candidate chose, which are its content, so only `value` is kept."""
    return "value" if field == "value" or field.startswith(("value.", "value[")) else field[:100]
