"""Content-only notes: `POST /v1/memories` with only a subject and a sentence (MCP `remember`, a
LangGraph `put`, the client's `write_memory` without a type).

The note is classified by the service's extractor, the one that reads closed sessions, and the
same form and speaker rules apply (domain/statement_rules.py): an agent's own "I'll ..." is a
commitment; anything else is read as a statement about the subject (who signs, where they are
hosted, what they prefer, what happened). It is admitted as an agent-reported memory: source kind
`customer_claim` (the unverified rank an agent may assert, never `customer_confirmed` or
`system_of_record`; a token whose roles may assert only inferences writes `agent_inference`),
system `agent_note`, written by the token's subject, and it expires within
180 days like every unverified note (the product requirements). It is shown in the context's unverified section,
so it never outranks what the customer confirmed or the system of record says. A commercial term
is held for a reviewer; a value the system of record owns is checked against it, not stored.
The reply always says what was decided, and a sentence a model can relay when it was not admitted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agent_memory.domain.enums import Authority, Decision, EventType, FactCategory, MemoryType, Role
from agent_memory.domain.errors import InvalidRequest, UnauthorizedMutation
from agent_memory.domain.explanations import explain
from agent_memory.domain.extraction import (
    CandidateMemory,
    ExtractionResult,
    SkippedStatement,
    Speaker,
    Transcript,
    Turn,
)
from agent_memory.domain.ids import ID_MAX_LENGTH, ID_RULE, SubjectId, valid_id
from agent_memory.domain.records import MAX_CONTENT_CHARS, MemoryWrite, Principal, Source, WriteResult, utcnow
from agent_memory.domain.statement_rules import SYSTEM_OF_RECORD_CLAIM, apply_statement_rules
from agent_memory.ports.extractor import ExtractionFailed, Extractor
from agent_memory.ports.store import NewEvent
from agent_memory.ports.system_of_record import SystemOfRecord
from agent_memory.services.authorization import require_mutation, require_source_assertion
from agent_memory.services.sor_claims import LIVE_VALUE_UNAVAILABLE, judge_claims, record_claims
from agent_memory.services.write_gateway import WriteGateway

# The authority of a note a model or an agent writes: unverified (rank 1), shown as such.
AGENT_NOTE_SOURCE = Authority.CUSTOMER_CLAIM
AGENT_NOTE_SYSTEM = "agent_note"
NOTE_FIELDS = frozenset({"subject_id", "content", "session_id"})


class ContentOnlyNote(BaseModel):
    """A memory write with only a subject and its content: the service classifies it."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"subject_id": "ACC-1", "content": "Dana Ortiz has left; Sam Lee now signs renewals."}
            ]
        },
    )

    subject_id: SubjectId
    content: str = Field(min_length=1, max_length=MAX_CONTENT_CHARS)
    session_id: str | None = Field(default=None, max_length=ID_MAX_LENGTH)


@dataclass(frozen=True)
class NoteDecision:
    result: WriteResult
    explanation: str | None
    classified_as: dict[str, Any]


class NoteService:
    def __init__(
        self,
        gateway: WriteGateway,
        extractor: Callable[[], Extractor],
        system_of_record: SystemOfRecord | None,
    ) -> None:
        self.gateway = gateway
        self._extractor = extractor
        self.system_of_record = system_of_record

    def write(self, principal: Principal, note: ContentOnlyNote) -> NoteDecision:
        """Classify the note, then admit it through the gateway (or say why it is not stored)."""
        require_mutation(principal, Role.AGENT, Role.INTEGRATION, action="write memories")
        source_kind = note_source_kind(principal)
        if not note.content.strip():
            raise InvalidRequest("content must not be blank", field="content")
        if note.session_id is not None and not valid_id(note.session_id):
            raise InvalidRequest(f"session_id must be {ID_RULE}", field="session_id")
        extractor = self._extractor()
        policy = self.gateway.policies.for_tenant(principal.tenant_id)
        slot_of_field = {f: slot for slot, f in policy.sor_slot_fields.items()}
        # The agent's own promise first (a commitment only the agent can give), then the note read
        # as a statement about the subject.
        own = self._read(extractor, note, Speaker.AGENT, slot_of_field)
        commitment = next((c for c in own.candidates if c.type is MemoryType.COMMITMENT), None)
        read = own if commitment is not None else self._read(extractor, note, Speaker.CUSTOMER, slot_of_field)
        chosen = commitment or _choose(read.candidates) or _unplaced(read.skipped, note.content, extractor)
        if chosen is None:
            return self._not_stored(principal, note, read.skipped, slot_of_field)
        write = self._write(note, chosen, source_kind)
        result = self.gateway.write(principal, write)
        return NoteDecision(
            result,
            explain(result.decision, result.reasons, slot=write.slot),
            {"type": write.type.value, "category": write.category, "slot": write.slot},
        )

    @staticmethod
    def _read(
        extractor: Extractor, note: ContentOnlyNote, speaker: Speaker, slot_of_field: dict[str, str]
    ) -> ExtractionResult:
        transcript = Transcript(
            session_id=note.session_id or "note",
            subject_id=note.subject_id,
            occurred_at=utcnow(),
            turns=[Turn(speaker=speaker, text=note.content)],
        )
        try:
            result = extractor.extract(transcript)
        except ExtractionFailed as exc:
            raise InvalidRequest(f"content could not be classified: {exc}", field="content") from exc
        return apply_statement_rules(result, transcript, slot_of_field)

    def _write(self, note: ContentOnlyNote, chosen: CandidateMemory, source_kind: Authority) -> MemoryWrite:
        # No expiry asked for: admission bounds every unverified note by the tenant's
        # unverified_max_ttl_days (INV-MEM-02), and a commitment stays open until closed.
        now = utcnow()
        return MemoryWrite(
            subject_id=note.subject_id,
            type=chosen.type,
            category=chosen.category,
            slot=chosen.slot,
            content=note.content,
            value=chosen.value,
            source=Source(kind=source_kind, system=AGENT_NOTE_SYSTEM, reference=note.session_id),
            session_id=note.session_id,
            effective_at=now,
            confidence=chosen.confidence,
            confidence_basis=f"agent note; {chosen.confidence_basis}"[:500],
            extractor=chosen.extractor,
            extractor_version=chosen.extractor_version,
            actor="agent",
            flags=["untrusted_instruction"] if "untrusted_instruction" in chosen.flags else [],
        )

    def _not_stored(
        self,
        principal: Principal,
        note: ContentOnlyNote,
        skipped: list[SkippedStatement],
        slot_of_field: dict[str, str],
    ) -> NoteDecision:
        """Nothing to store: a claim about what the system of record owns is checked against it;
        anything else is refused with the extractor's reason."""
        claim = next((s for s in skipped if s.reason == SYSTEM_OF_RECORD_CLAIM and s.field), None)
        reasons = [skipped[0].reason if skipped else "not_memorable"]
        verdicts = None
        if claim is not None and claim.field is not None:
            reasons = [LIVE_VALUE_UNAVAILABLE, f"field:{claim.field}"]
            if self.system_of_record is not None:
                verdicts = judge_claims(
                    self.system_of_record, principal.tenant_id, note.subject_id, [(note.content, claim.field)]
                )
                reasons = [verdicts.outcomes[0], f"field:{claim.field}"]
        with self.gateway.store.tenant(principal.tenant_id) as s:
            if claim is not None and claim.field is not None and verdicts is not None:
                record_claims(
                    s,
                    principal.sub,
                    note.subject_id,
                    [(claim.field, verdicts.outcomes[0])],
                    slot_of_field,
                    verdicts.read_at,
                )
            # The refusal is audited like a gateway rejection: the reason, never the note's text.
            s.append_events(
                [
                    NewEvent(
                        EventType.REJECTED.value,
                        principal.sub,
                        None,
                        note.subject_id,
                        reasons[0],
                        {
                            "content_only_note": True,
                            **({"session_id": note.session_id} if note.session_id else {}),
                        },
                    )
                ]
            )
        result = WriteResult(decision=Decision.REJECTED, reasons=reasons, memory=None)
        return NoteDecision(result, explain(Decision.REJECTED, reasons), {})


def note_source_kind(principal: Principal) -> Authority:
    """The source kind of the token's notes: the unverified rank (customer_claim) when its roles
    may assert it, else an inference (which admission quarantines unless it is a commitment or an
    episode); a token that may assert neither is refused (403), before anything is classified."""
    for kind in (AGENT_NOTE_SOURCE, Authority.AGENT_INFERENCE):
        try:
            require_source_assertion(principal, kind)
        except UnauthorizedMutation:
            continue
        return kind
    require_source_assertion(principal, AGENT_NOTE_SOURCE)  # raises, naming the kind
    raise AssertionError("unreachable")


def _choose(candidates: list[CandidateMemory]) -> CandidateMemory | None:
    """The note's classification: a commercial term if any statement holds one (held for a
    reviewer), else an instruction-like one (quarantined), else the surest candidate."""
    commercial = [c for c in candidates if c.category == FactCategory.CONTRACT_COMMERCIAL.value]
    flagged = [c for c in candidates if "untrusted_instruction" in c.flags]
    pool = commercial or flagged or candidates
    return max(pool, key=lambda c: c.confidence) if pool else None


# What the classifier says of a note it cannot place with confidence: the agent chose to write it, so
# it is kept as what the agent recorded (an episode) when it is a statement of some length.
_UNPLACED = frozenset({"low_confidence", "not_memorable"})
_UNPLACED_MIN_WORDS = 5


def _unplaced(skipped: list[SkippedStatement], content: str, extractor: Extractor) -> CandidateMemory | None:
    """An episode for a note the classifier could not place (every statement unsure or judged
    unremarkable), unless it is short, a question or anything the rules refuse for a reason."""
    if not skipped or any(s.reason not in _UNPLACED for s in skipped):
        return None
    if len(content.split()) < _UNPLACED_MIN_WORDS or content.rstrip().endswith("?"):
        return None
    first = skipped[0]
    return CandidateMemory(
        type=MemoryType.EPISODE,
        category=MemoryType.EPISODE.value.upper(),
        content=content,
        span=first.span,
        speaker=Speaker.AGENT,
        source_kind=AGENT_NOTE_SOURCE,
        confidence=0.5,
        confidence_basis="agent note the classifier could not place; kept as what the agent recorded",
        extractor=extractor.name,
        extractor_version=extractor.version,
    )


def is_content_only(body: Any) -> bool:
    """A write body with only a subject, content and optionally a session: classified by the service."""
    return isinstance(body, dict) and "content" in body and set(body) <= NOTE_FIELDS
