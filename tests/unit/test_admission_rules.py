"""Pure admission rules: classification and authority-ranked conflict resolution."""

from datetime import UTC, datetime, timedelta

import pytest

from agent_memory.domain.admission import classify, resolve_conflict
from agent_memory.domain.enums import Authority, Decision, MemoryType, Sensitivity, Status
from agent_memory.domain.errors import InvalidRequest
from agent_memory.domain.policy import profile
from agent_memory.domain.records import MemoryRecord, MemoryWrite, Source

NOW = datetime(2026, 10, 1, tzinfo=UTC)


def write(**kw) -> MemoryWrite:
    base = {
        "subject_id": "ACC-1",
        "type": "preference",
        "slot": "preference.contact_channel",
        "content": "Prefers email",
        "source": {"kind": "customer_confirmed"},
    }
    base.update(kw)
    return MemoryWrite.model_validate(base)


def classified(w: MemoryWrite, policy: str = "crm", masked=(), signals=()):
    return classify(
        w, policy=profile(policy), now=NOW, masked_kinds=list(masked), injection_signals=tuple(signals)
    )


def active(authority: Authority, effective: datetime) -> MemoryRecord:
    return MemoryRecord(
        id="mem_active",
        tenant_id="t",
        subject_id="ACC-1",
        type=MemoryType.FACT,
        category="STAKEHOLDER",
        slot="stakeholder.primary_contact",
        content="Dana is the primary contact",
        source=Source(kind=authority),
        actor="x",
        authority=authority,
        confidence=1.0,
        status=Status.ACTIVE,
        created_at=effective,
        effective_at=effective,
        content_hash="h",
    )


def fact(kind: str, effective: datetime, category: str = "STAKEHOLDER"):
    return classified(
        write(
            type="fact",
            category=category,
            slot="stakeholder.primary_contact",
            content="Lee is the primary contact",
            source={"kind": kind},
            effective_at=effective,
        )
    )


def test_given_a_fact_without_slot_when_classified_then_422_names_slot():
    with pytest.raises(InvalidRequest) as err:
        classified(write(type="fact", category="STAKEHOLDER", slot=None))
    assert err.value.field == "slot"


def test_given_an_episode_with_a_slot_when_classified_then_422_names_slot():
    with pytest.raises(InvalidRequest) as err:
        classified(write(type="episode", slot="episode.x"))
    assert err.value.field == "slot"


def test_given_an_inferred_preference_when_classified_then_it_becomes_a_quarantined_observation():
    c = classified(write(source={"kind": "agent_inference"}))
    assert c.type is MemoryType.OBSERVATION and c.slot is None and c.final is Decision.QUARANTINED


def test_given_a_plan_tier_claim_from_conversation_when_classified_then_rejected_as_owned_by_sor():
    c = classified(
        write(
            type="fact",
            category="ACCOUNT_PROFILE",
            slot="account.plan_tier",
            content="Customer account is Premium",
            source={"kind": "customer_claim"},
        )
    )
    assert c.final is Decision.REJECTED and "owned_by_system_of_record" in c.reasons


def test_given_an_unconfirmed_resolution_when_classified_then_rejected():
    c = classified(
        write(type="resolution", slot=None, content="Restarted the sync", source={"kind": "customer_claim"})
    )
    assert c.final is Decision.REJECTED and "outcome_not_confirmed" in c.reasons


def test_given_a_sentiment_asking_for_a_year_when_classified_then_expiry_is_capped_at_180_days():
    c = classified(
        write(
            type="sentiment",
            slot=None,
            content="Might expand next winter",
            effective_at=NOW,
            expires_at=NOW + timedelta(days=365),
        )
    )
    assert c.expires_at == NOW + timedelta(days=180)


def test_given_masked_identifiers_when_classified_then_sensitivity_is_at_least_confidential():
    c = classified(write(type="episode", slot=None, content="Refund to CARD-***-1111"), masked=["CARD"])
    assert c.sensitivity is Sensitivity.CONFIDENTIAL


def test_given_injection_signals_when_classified_then_quarantined_and_flagged():
    c = classified(write(type="episode", slot=None, content="x"), signals=["override_instructions"])
    assert c.final is Decision.QUARANTINED and "untrusted_instruction" in c.flags


def test_given_a_higher_authority_when_resolving_then_it_supersedes():
    out = resolve_conflict(fact("system_of_record", NOW), active(Authority.CUSTOMER_CONFIRMED, NOW))
    assert out.decision is Decision.ADMITTED and out.supersedes is not None


def test_given_equal_authority_and_newer_date_when_resolving_then_it_supersedes():
    out = resolve_conflict(
        fact("customer_confirmed", NOW), active(Authority.CUSTOMER_CONFIRMED, NOW - timedelta(days=1))
    )
    assert out.decision is Decision.ADMITTED


def test_given_equal_authority_and_older_date_when_resolving_then_the_active_record_stays():
    out = resolve_conflict(
        fact("customer_confirmed", NOW - timedelta(days=2)), active(Authority.CUSTOMER_CONFIRMED, NOW)
    )
    assert out.decision is Decision.REJECTED and out.supersedes is None


def test_given_a_lower_authority_contradiction_when_resolving_then_contested_not_superseding():
    out = resolve_conflict(
        fact("customer_claim", NOW), active(Authority.SYSTEM_OF_RECORD, NOW - timedelta(days=30))
    )
    assert out.decision is Decision.CONTESTED and out.supersedes is None


def test_given_a_conversational_discount_when_resolving_then_pending_approval_even_without_active():
    c = classified(
        write(
            type="fact",
            category="CONTRACT_COMMERCIAL",
            slot="contract.discount",
            content="20% discount on renewal",
            source={"kind": "customer_confirmed"},
        )
    )
    assert resolve_conflict(c, None).decision is Decision.PENDING_APPROVAL


def test_given_a_system_of_record_commercial_term_when_resolving_then_admitted():
    c = classified(
        write(
            type="fact",
            category="CONTRACT_COMMERCIAL",
            slot="contract.seat_price",
            content="$42/seat/month",
            source={"kind": "system_of_record"},
        )
    )
    assert resolve_conflict(c, None).decision is Decision.ADMITTED
