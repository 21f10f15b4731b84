"""Sensitive personal details (the product requirements: "sensitive personal detail → restricted / confirmation";
the product requirements: "restricted retention for sensitive data"): a small deterministic lexicon of the special
categories of GDPR Art. 9 (health, family status, religion, ethnicity, sexual orientation, union
membership) and criminal records (Art. 10), recognised in what a person says about themselves.

Admission stores such a statement as a `restricted` record held for confirmation (reason
`sensitive_personal_detail`) with the policy's short retention; the session extraction keeps a
customer's statement the extractor set aside as small talk when it is one of these, as a fact of
the slot `personal.<category>`. Never logs or returns the text it reads.
"""

from __future__ import annotations

import re

from agent_memory.domain.enums import Authority, FactCategory, MemoryType
from agent_memory.domain.extraction import (
    CandidateMemory,
    ExtractionResult,
    SkippedStatement,
    Speaker,
    Transcript,
)

SENSITIVE_REASON = "sensitive_personal_detail"


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# Each category: phrases that say something about a person, not a business ("a health check", "the
# European Union", "a family of products" do not match). Order: the first match names the slot.
CATEGORIES: dict[str, re.Pattern[str]] = {
    "health": _rx(
        r"\b(diagnosed|diagnosis|cancer|tumou?r|chemo(therapy)?|diabetes|dementia|alzheimer'?s|hiv"
        r"|heart attack|stroke|mental health|depression|anxiety disorder|rehab|terminally ill"
        r"|(my|his|her|their) (illness|surgery|medication|treatment|disability|condition|therapist)"
        r"|medical leave|sick leave|in (the )?hospital|pregnan(t|cy))\b"
    ),
    "family_status": _rx(
        r"\b(divorc(e|ed|ing)|separated from|widow(ed|er)?|passed away|(got|getting) married|our wedding"
        r"|custody|expecting (a|our) (baby|child)|(had|having) a baby|newborn|maternity leave"
        r"|paternity leave|my (ex-?wife|ex-?husband|fianc[eé]e?))\b"
    ),
    "religion": _rx(
        r"\b(my|our) (faith|religion|church|mosque|synagogue|temple)\b"
        r"|\b(i'?m|i am|we'?re|we are) (a )?(devout |practi[cs]ing )?(muslim|christian|catholic|jewish|hindu"
        r"|buddhist|sikh|atheist)\b"
    ),
    "ethnicity": _rx(r"\b(my|our) (ethnicity|ethnic (background|origin)|race)\b"),
    "sexual_orientation": _rx(
        r"\b(i'?m|i am) (gay|lesbian|bisexual|queer|transgender)\b|\bsexual orientation\b|\bcame out\b"
    ),
    "union_membership": _rx(
        r"\b(trade union|union member(ship)?|member of the [\w-]+ union|(my|our) union)\b"
    ),
    "criminal_record": _rx(
        r"\b(criminal record|convicted (of|for)|conviction for|(was|been|got) arrested|on (probation|parole)"
        r"|served time|in (prison|jail))\b"
    ),
}

# A customer's sentence the extractor set aside for these reasons is read again for the lexicon;
# questions, the agent's sentences and system-of-record claims stay set aside.
_RECONSIDERED = frozenset({"not_memorable", "low_confidence", "small_talk", "pleasantry", "venting"})
_CONFIDENCE = 0.7  # a lexicon match: above every preset's threshold, and held for confirmation anyway


def sensitive_categories(text: str) -> tuple[str, ...]:
    """The sensitive categories `text` speaks of, in the lexicon's order (empty: none)."""
    return tuple(name for name, pattern in CATEGORIES.items() if pattern.search(text))


def personal_slot(category: str) -> str:
    return f"personal.{category}"


def restrict_sensitive(result: ExtractionResult, transcript: Transcript) -> ExtractionResult:
    """What a session yields once sensitive personal details take their restricted path: a proposed
    memory that states one becomes a fact of its `personal.<category>` slot, and a customer's
    sentence set aside as small talk that states one is proposed as such a fact."""
    candidates = [_as_personal_fact(c, sensitive_categories(c.content)) for c in result.candidates]
    skipped: list[SkippedStatement] = []
    for skip in result.skipped:
        text = _span_text(transcript, skip)
        categories = sensitive_categories(text) if text is not None else ()
        if skip.reason not in _RECONSIDERED or not categories or text is None:
            skipped.append(skip)
            continue
        candidates.append(
            CandidateMemory(
                type=MemoryType.FACT,
                category=FactCategory.ACCOUNT_PROFILE.value,
                slot=personal_slot(categories[0]),
                content=text,
                span=skip.span,
                speaker=Speaker.CUSTOMER,
                source_kind=Authority.CUSTOMER_CLAIM,
                confidence=_CONFIDENCE,
                confidence_basis=f"sensitive personal detail ({categories[0]}): held for confirmation",
                extractor="sensitive_lexicon",
                extractor_version="1",
            )
        )
    return result.model_copy(update={"candidates": candidates, "skipped": skipped})


def _as_personal_fact(cand: CandidateMemory, categories: tuple[str, ...]) -> CandidateMemory:
    if not categories or cand.speaker is not Speaker.CUSTOMER or cand.type is MemoryType.OBSERVATION:
        return cand
    return cand.model_copy(
        update={
            "type": MemoryType.FACT,
            "category": FactCategory.ACCOUNT_PROFILE.value,
            "slot": personal_slot(categories[0]),
            "value": {},
        }
    )


def _span_text(transcript: Transcript, skip: SkippedStatement) -> str | None:
    """The customer's sentence a skipped statement points at (None: not the customer's, or no text)."""
    span = skip.span
    if span.turn >= len(transcript.turns):
        return None
    turn = transcript.turns[span.turn]
    if turn.speaker is not Speaker.CUSTOMER:
        return None
    text = turn.text[span.start : span.end].strip()
    return text or None
