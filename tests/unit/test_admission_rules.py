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


def test_given_a_sentiment_asking_for_a_year_when_classified_then_refused_naming_expires_at():
    # Given a sentiment whose caller asks it be kept a year (INV-MEM-02: at most 180 days)
    w = write(
        type="sentiment",
        slot=None,
        content="Might expand next winter",
        effective_at=NOW,
        expires_at=NOW + timedelta(days=365),
    )
    # When classified, Then refused: a write may only shorten its type's retention
    with pytest.raises(InvalidRequest) as refused:
        classified(w)
    assert refused.value.field == "expires_at"


def test_given_a_sentiment_without_expiry_when_classified_then_it_expires_in_180_days():
    c = classified(write(type="sentiment", slot=None, content="Might expand next winter", effective_at=NOW))
    assert c.expires_at == NOW + timedelta(days=180)


def test_given_an_episode_asking_to_outlive_its_ttl_when_classified_then_refused():
    # Given the wealth preset (seed 003 RET-01: episodes 90 days), an episode asking for 2030
    w = write(
        type="episode", slot=None, content="Called about fees", expires_at=datetime(2030, 1, 1, tzinfo=UTC)
    )
    # When classified, Then 422 naming expires_at; a shorter expiry is taken as asked
    with pytest.raises(InvalidRequest) as refused:
        classified(w, policy="wealth")
    assert refused.value.field == "expires_at"
    shorter = NOW + timedelta(days=10)
    assert (
        classified(write(type="episode", slot=None, content="x", expires_at=shorter), "wealth").expires_at
        == shorter
    )


@pytest.mark.parametrize(
    ("kind", "category", "slot", "expected_days"),
    [
        ("customer_claim", "STAKEHOLDER", "stakeholder.primary_contact", 180),  # an unverified claim
        ("customer_claim", "CONTRACT_COMMERCIAL", "contract.discount", 180),  # held for approval
        ("customer_confirmed", "CONTRACT_COMMERCIAL", "contract.discount", 180),  # held for approval
        ("customer_confirmed", "STAKEHOLDER", "stakeholder.primary_contact", None),  # stated by the customer
        ("system_of_record", "CONTRACT_COMMERCIAL", "contract.seat_price", None),  # verified
    ],
)
def test_given_a_fact_when_classified_then_only_unverified_notes_expire_within_180_days(
    kind, category, slot, expected_days
):
    # Given a fact with no expiry asked for, When classified
    c = classified(write(type="fact", category=category, slot=slot, content="A term", source={"kind": kind}))
    # Then an unverified note (INV-MEM-02) expires at most 180 days from admission; others do not
    assert c.expires_at == (NOW + timedelta(days=expected_days) if expected_days else None)


def test_given_an_unverified_claim_asking_for_two_years_when_classified_then_refused():
    w = write(
        type="fact",
        category="STAKEHOLDER",
        slot="stakeholder.primary_contact",
        content="Lee signs",
        source={"kind": "customer_claim"},
        expires_at=NOW + timedelta(days=730),
    )
    with pytest.raises(InvalidRequest) as refused:
        classified(w)
    assert refused.value.field == "expires_at" and "unverified" in refused.value.message


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


def test_given_a_low_confidence_commercial_term_when_classified_then_held_for_a_reviewer_not_dropped():
    # Given a discount mentioned with little confidence (a model's weak reading of a sentence)
    w = write(
        type="fact",
        category="CONTRACT_COMMERCIAL",
        slot="contract.discount",
        content="Maybe they mentioned 10% off",
        source={"kind": "customer_claim"},
        confidence=0.12,
    )
    # When classified
    c = classified(w)
    # Then a reviewer decides it (INV-MEM-01), rather than the confidence threshold dropping it
    assert c.needs_approval and c.final is None
    assert "below_confidence_threshold" not in c.reasons
    # while a non-commercial fact that unsure is not stored
    unsure = classified(write(type="fact", category="STAKEHOLDER", slot="stakeholder.primary_contact",
                              content="Maybe Lee", source={"kind": "customer_claim"}, confidence=0.12))  # fmt: skip
    assert unsure.final is Decision.REJECTED and "below_confidence_threshold" in unsure.reasons
