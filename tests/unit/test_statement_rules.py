"""The form and speaker rules (domain/statement_rules.py) on hand-made extractor results: what a
statement may become whatever the model said about it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent_memory.domain.enums import Authority, MemoryType
from agent_memory.domain.extraction import (
    CandidateMemory,
    ExtractionResult,
    SkippedStatement,
    Speaker,
    Transcript,
    Turn,
)
from agent_memory.domain.records import SourceSpan
from agent_memory.domain.statement_rules import (
    AGENT_SENTENCE_NOT_A_CUSTOMER_CLAIM,
    QUESTION_NOT_A_FACT,
    SYSTEM_OF_RECORD_CLAIM,
    apply_statement_rules,
)

OWNED = {"plan_tier", "seats", "sla"}


def one_statement(speaker: Speaker, text: str, **candidate: object) -> tuple[ExtractionResult, Transcript]:
    transcript = Transcript(
        session_id="s",
        subject_id="A",
        occurred_at=datetime.now(UTC),
        turns=[Turn(speaker=speaker, text=text)],
    )
    fields = {
        "type": MemoryType.FACT,
        "category": "CONTRACT_COMMERCIAL",
        "slot": "contract.discount",
        "content": text,
        "span": SourceSpan(turn=0, start=0, end=len(text)),
        "speaker": speaker,
        "source_kind": Authority.CUSTOMER_CLAIM,
        "confidence": 0.9,
        "confidence_basis": "model",
        "extractor": "test",
        "extractor_version": "1",
        **candidate,
    }
    return ExtractionResult(candidates=[CandidateMemory.model_validate(fields)]), transcript


@pytest.mark.parametrize(
    "question",
    [
        "When will we get the renewal quote?",
        "What discount did the sales rep mention?",
        "Is the price final?",
    ],
)
def test_a_question_asking_for_information_is_never_a_fact(question: str) -> None:
    result, transcript = one_statement(Speaker.CUSTOMER, question)
    ruled = apply_statement_rules(result, transcript, OWNED)
    assert ruled.candidates == [] and [s.reason for s in ruled.skipped] == [QUESTION_NOT_A_FACT]


@pytest.mark.parametrize(
    "request_for_a_term",
    ["Can we get 20% off the renewal?", "If we signed for three years, could you bring the price down?"],
)
def test_a_question_asking_for_a_commercial_term_is_still_held(request_for_a_term: str) -> None:
    result, transcript = one_statement(Speaker.CUSTOMER, request_for_a_term)
    ruled = apply_statement_rules(result, transcript, OWNED)
    assert [c.category for c in ruled.candidates] == ["CONTRACT_COMMERCIAL"]


def test_an_agent_declining_a_term_is_not_a_customer_claim() -> None:
    result, transcript = one_statement(Speaker.AGENT, "I can't confirm a discount myself.")
    ruled = apply_statement_rules(result, transcript, OWNED)
    assert ruled.candidates == [] and ruled.skipped[0].reason == AGENT_SENTENCE_NOT_A_CUSTOMER_CLAIM


def test_an_agent_offer_is_held_as_the_agents_not_the_customers() -> None:
    result, transcript = one_statement(Speaker.AGENT, "I can offer you 10% off if you renew this month.")
    ruled = apply_statement_rules(result, transcript, OWNED)
    assert [c.source_kind for c in ruled.candidates] == [Authority.AGENT_INFERENCE]
    assert ruled.candidates[0].category == "CONTRACT_COMMERCIAL"


def test_an_agent_fact_keeps_the_agents_authority() -> None:
    result, transcript = one_statement(
        Speaker.AGENT,
        "Your team is hosted in Frankfurt.",
        category="TECHNICAL_ENVIRONMENT",
        slot="tech.hosting_region",
        source_kind=Authority.CUSTOMER_CONFIRMED,
    )
    ruled = apply_statement_rules(result, transcript, OWNED)
    assert [c.source_kind for c in ruled.candidates] == [Authority.AGENT_INFERENCE]


@pytest.mark.parametrize(
    ("text", "field"), [("Our account is Premium.", "plan_tier"), ("We have 40 seats now.", "seats")]
)
def test_a_customer_statement_of_a_value_the_system_of_record_owns_is_a_claim(text: str, field: str) -> None:
    result, transcript = one_statement(Speaker.CUSTOMER, text, slot="contract.pricing")
    ruled = apply_statement_rules(result, transcript, OWNED)
    assert ruled.candidates == []
    assert [(s.reason, s.field) for s in ruled.skipped] == [(SYSTEM_OF_RECORD_CLAIM, field)]


def test_a_skipped_statement_of_a_value_the_system_of_record_owns_is_a_claim_too() -> None:
    text = "We're on the Enterprise plan."
    transcript = Transcript(
        session_id="s",
        subject_id="A",
        occurred_at=datetime.now(UTC),
        turns=[Turn(speaker=Speaker.CUSTOMER, text=text)],
    )
    skipped = SkippedStatement(
        span=SourceSpan(turn=0, start=0, end=len(text)), reason="owned_by_system_of_record"
    )
    ruled = apply_statement_rules(ExtractionResult(skipped=[skipped]), transcript, OWNED)
    assert [(s.reason, s.field) for s in ruled.skipped] == [(SYSTEM_OF_RECORD_CLAIM, "plan_tier")]


def test_a_hedged_plan_is_no_claim_of_the_current_value() -> None:
    result, transcript = one_statement(Speaker.CUSTOMER, "We might move to the Enterprise plan next year.")
    ruled = apply_statement_rules(result, transcript, OWNED)
    assert len(ruled.candidates) == 1


def test_a_field_the_tenant_does_not_map_to_the_system_of_record_is_no_claim() -> None:
    result, transcript = one_statement(Speaker.CUSTOMER, "Our account is Premium.")
    ruled = apply_statement_rules(result, transcript, {"sla"})
    assert len(ruled.candidates) == 1
