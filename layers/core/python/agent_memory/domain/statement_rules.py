"""Form and speaker rules: what a statement can be, whatever the extractor's model said about it.

Applied to every extractor's result (rules, learned, LLM) before anything reaches the write
gateway, so no model can forget them:

- a question is never a fact ("When will we get the renewal quote?" states nothing); a question
  that asks for a term ("Can we get 20% off?", "could you bring the price down?") is still a
  commercial request and is held for approval;
- an agent's sentence is never a customer's claim: an agent declining a commercial term without
  naming one ("I can't confirm a discount myself") is not stored; an agent's offer is held for
  approval as the agent's; any other agent sentence keeps the agent's authority (an inference:
  admission makes it an observation unless it is a commitment);
- a customer's statement about a value the system of record owns (plan tier, seats) is a claim to
  check against the live value, never a memory or a commercial approval item of its own: the
  extraction worker compares it with the live value (services/sor_claims.py).

Pure: the extraction worker and the content-only note path call it.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from agent_memory.domain.enums import Authority, FactCategory, MemoryType
from agent_memory.domain.extraction import (
    CandidateMemory,
    ExtractionResult,
    SkippedStatement,
    Speaker,
    Transcript,
)
from agent_memory.domain.records import SourceSpan

_I = re.IGNORECASE

# Statements about values the system of record owns, by its field names (the policy's
# sor_slot_fields map slots to these). The rules extractor reads the same patterns.
SOR_PLAN = re.compile(
    r"\b(plan tier|on (the )?[A-Z]?\w+ (plan|tier)\b|(plan|tier|subscription)\s*:|on (business|enterprise"
    r"|premium|"
    r"starter|team|growth|pro|basic|standard|professional|free)\b|account is (premium|enterprise|business|"
    r"gold|platinum|basic|standard|pro))",
    _I,
)
SOR_SEATS = re.compile(r"\b\d[\d,]*\s+(seats|licen[cs]es)\b|\bseats?\s*:\s*\d", _I)
SOR_CLAIM_PATTERNS: dict[str, re.Pattern[str]] = {"plan_tier": SOR_PLAN, "seats": SOR_SEATS}
# A hedged statement ("we might move to Enterprise") claims no current value.
HEDGE_MODAL = re.compile(r"\b(might|maybe|perhaps|possibly|probably|could)\b|(?-i:\bmay\b)", _I)
_CONCRETE_TERM = re.compile(r"\d")
# A question asking for information ("When will we get the quote?") rather than for a term ("Could
# you bring the price down?", "Can we get 20% off?").
_INFORMATION_QUESTION = re.compile(
    r"^\W*(when|what|where|who|whom|whose|which|why|how|is|are|was|were|has|have|had)\b", _I
)
_REQUEST = re.compile(r"\b(can|could|would|will)\s+(you|we|i)\b|\bis it possible\b|\bany chance\b", _I)
# An agent declining, not offering: "I can't confirm a discount myself".
_DECLINING = re.compile(
    r"\b(can'?t|cannot|can not|won'?t|unable|not able|not in a position|don'?t|do not)\b", _I
)

# Reasons these rules give (the extraction report's `reason`).
QUESTION_NOT_A_FACT = "question_not_a_fact"
AGENT_SENTENCE_NOT_A_CUSTOMER_CLAIM = "agent_sentence_not_a_customer_claim"
SYSTEM_OF_RECORD_CLAIM = "system_of_record_claim"  # replaced by the live check's outcome

# Skipped statements that stay skipped even when they name a value the system of record owns.
_NOT_A_CLAIM = frozenset(
    {
        "superseded_in_session",
        "duplicate_statement",
        "duplicate_confirmation",
        "declined_to_state",
        "sensitive_identifier_only",
    }
)
_CUSTOMER_AUTHORITIES = frozenset({Authority.CUSTOMER_CONFIRMED, Authority.CUSTOMER_CLAIM})


def is_question(text: str) -> bool:
    return text.rstrip().endswith("?")


def sor_field(text: str, owned_fields: Collection[str]) -> str | None:
    """The system-of-record field a plain (not hedged, not asked) statement claims a value of."""
    if is_question(text) or HEDGE_MODAL.search(text):
        return None
    for name, pattern in SOR_CLAIM_PATTERNS.items():
        if name in owned_fields and pattern.search(text):
            return name
    return None


def statement_text(transcript: Transcript, span: SourceSpan) -> str:
    turn = transcript.turns[span.turn].text if span.turn < len(transcript.turns) else ""
    return turn[span.start : span.end]


def apply_statement_rules(
    result: ExtractionResult, transcript: Transcript, owned_fields: Collection[str]
) -> ExtractionResult:
    """The extractor's result with the form and speaker rules applied (see the module's doc)."""
    candidates: list[CandidateMemory] = []
    skipped: list[SkippedStatement] = []
    for item in result.skipped:
        text = statement_text(transcript, item.span)
        speaker = transcript.turns[item.span.turn].speaker if item.span.turn < len(transcript.turns) else None
        field = sor_field(text, owned_fields) if speaker is Speaker.CUSTOMER else None
        if field is not None and item.reason not in _NOT_A_CLAIM:
            item = item.model_copy(update={"reason": SYSTEM_OF_RECORD_CLAIM, "field": field})
        skipped.append(item)
    for cand in result.candidates:
        decided = decide_candidate(cand, statement_text(transcript, cand.span), owned_fields)
        if isinstance(decided, SkippedStatement):
            skipped.append(decided)
        else:
            candidates.append(decided)
    skipped.sort(key=lambda s: (s.span.turn, s.span.start))
    return result.model_copy(update={"candidates": candidates, "skipped": skipped})


def decide_candidate(
    cand: CandidateMemory, text: str, owned_fields: Collection[str]
) -> CandidateMemory | SkippedStatement:
    """One candidate under the rules: kept, kept with the agent's authority, or skipped with a reason."""
    if "untrusted_instruction" in cand.flags:
        return cand  # inert data whatever it says: the gateway quarantines it
    commercial = cand.category == FactCategory.CONTRACT_COMMERCIAL.value
    concrete = bool(_CONCRETE_TERM.search(text))
    field = sor_field(text, owned_fields) if cand.speaker is Speaker.CUSTOMER else None
    if field is not None and cand.type is not MemoryType.EPISODE:
        return SkippedStatement(
            span=cand.span, reason=SYSTEM_OF_RECORD_CLAIM, score=cand.confidence, field=field
        )
    if cand.type is MemoryType.FACT and is_question(text) and not (commercial and _asks_for_a_term(text)):
        return SkippedStatement(span=cand.span, reason=QUESTION_NOT_A_FACT, score=cand.confidence)
    if cand.speaker is Speaker.AGENT and cand.source_kind in _CUSTOMER_AUTHORITIES:
        if commercial and not concrete and _DECLINING.search(text):
            return SkippedStatement(
                span=cand.span, reason=AGENT_SENTENCE_NOT_A_CUSTOMER_CLAIM, score=cand.confidence
            )
        return cand.model_copy(
            update={
                "source_kind": Authority.AGENT_INFERENCE,
                "confidence_basis": f"{cand.confidence_basis}; stated by the agent, not the customer"[:500],
            }
        )
    return cand


def _asks_for_a_term(question: str) -> bool:
    """A commercial question that is a request for a term (held for approval like a statement of
    one): it names a concrete term, or asks for one without asking for information."""
    if _CONCRETE_TERM.search(question):
        return True
    return not _INFORMATION_QUESTION.search(question) and bool(_REQUEST.search(question))
