"""Human review (approve, reject, reinstate) on the in-memory store (tests/fakes/memory_store.py,
held to the PostgreSQL store's behaviour by tests/contract/), with records written through the
real write gateway. The HTTP routes and the console stay tested end to end (tests/e2e/)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import ValidationError

from agent_memory.domain.audit import verify_chain
from agent_memory.domain.enums import Authority, Decision, Role, Sensitivity, Status
from agent_memory.domain.errors import Conflict, InvalidRequest, NotFound, UnauthorizedMutation
from agent_memory.domain.records import MemoryWrite, Principal
from agent_memory.services.policies import PolicyRegistry
from agent_memory.services.review import ReviewService, _reinstated_version
from agent_memory.services.write_gateway import WriteGateway
from fakes.memory_store import MemoryStore

TENANT = "review-fake"
AGENT = Principal(sub="agent-1", tenant_id=TENANT, roles=frozenset({Role.AGENT}))
INTEGRATION = Principal(sub="crm-sync", tenant_id=TENANT, roles=frozenset({Role.INTEGRATION}))
REVIEWER = Principal(
    sub="rev-1", tenant_id=TENANT, roles=frozenset({Role.REVIEWER}), clearance=Sensitivity.CONFIDENTIAL
)
JUNIOR = Principal(sub="rev-2", tenant_id=TENANT, roles=frozenset({Role.REVIEWER}))  # internal clearance
T0 = datetime(2026, 9, 1, tzinfo=UTC)
PRICE = "contract.seat_price"
CHANNEL = "preference.contact_channel"


def w(**kw: Any) -> MemoryWrite:
    base: dict[str, Any] = {
        "subject_id": "ACC-1",
        "type": "fact",
        "category": "CONTRACT_COMMERCIAL",
        "slot": PRICE,
        "content": "Enterprise license renewed for 500 seats at $42/seat/month.",
        "source": {"kind": "system_of_record", "system": "crm", "reference": "CTR-118"},
        "effective_at": T0,
    }
    base.update(kw)
    return MemoryWrite.model_validate(base)


DISCOUNT_CLAIM = {
    "content": "In the QBR the customer said we agreed to $35/seat/month with a 20% discount.",
    "source": {"kind": "customer_claim", "system": "meeting", "reference": "qbr-2026-10"},
    "effective_at": T0 + timedelta(days=31),
}


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


@pytest.fixture
def gateway(store: MemoryStore, embedder: Any) -> WriteGateway:
    return WriteGateway(store, embedder, PolicyRegistry(store, "crm"))


@pytest.fixture
def review(store: MemoryStore) -> ReviewService:
    return ReviewService(store, PolicyRegistry(store, "crm"))


def record(store: MemoryStore, memory_id: str) -> Any:
    with store.tenant(TENANT) as s:
        return s.get_record(memory_id)


def events_of(store: MemoryStore, memory_id: str | None = None) -> list[Any]:
    with store.tenant(TENANT) as s:
        return s.audit_events(subject_id=None, memory_id=memory_id, since=None, after_seq=None, limit=1000)


@pytest.fixture
def pending_claim(gateway: WriteGateway) -> tuple[str, str]:
    """The system of record's price, and a customer's discount claim waiting for approval."""
    sor = gateway.write(INTEGRATION, w())
    claim = gateway.write(AGENT, w(**DISCOUNT_CLAIM))
    assert claim.decision is Decision.PENDING_APPROVAL
    return sor.memory.id, claim.memory.id


def test_given_a_pending_commercial_term_when_approved_without_evidence_then_refused_and_nothing_changes(
    review, store, pending_claim
):
    # Given a discount claim waiting for approval
    sor_id, claim_id = pending_claim
    before = len(events_of(store))
    # When a reviewer approves it without an evidence reference
    with pytest.raises(InvalidRequest) as refused:
        review.approve(REVIEWER, claim_id, note="ok", evidence_ref=None)
    # Then the refusal names the field, neither record changed, and the log has only the refusal
    assert refused.value.field == "evidence_ref"
    assert record(store, claim_id).status is Status.PENDING_APPROVAL
    assert record(store, sor_id).status is Status.ACTIVE
    [refusal] = events_of(store)[before:]
    assert (refusal.event_type, refusal.reason, refusal.memory_id) == (
        "memory_approval_refused",
        "evidence_ref_pattern",
        claim_id,
    )


def test_given_a_pending_commercial_term_when_approved_with_evidence_then_it_supersedes_the_active_one(
    review, store, pending_claim
):
    # Given a discount claim waiting next to the system of record's price
    sor_id, claim_id = pending_claim
    # When a reviewer approves it with evidence
    result = review.approve(REVIEWER, claim_id, note="signed amendment", evidence_ref="signed-2026-118")
    # Then it is the slot's active version, human-verified, superseding the price it replaces
    approved = result.memory
    assert result.superseded == [sor_id]
    assert approved.status is Status.ACTIVE and approved.authority is Authority.HUMAN_VERIFIED
    assert approved.evidence_ref == "signed-2026-118" and approved.verified_by == "rev-1"
    assert approved.version == 2 and approved.supersedes_id == sor_id
    assert "approved_by_reviewer" in approved.reasons
    with store.tenant(TENANT) as s:
        history = s.slot_history("ACC-1", PRICE)
    assert [(h.id, h.status) for h in history] == [(sor_id, Status.SUPERSEDED), (claim_id, Status.ACTIVE)]
    # and the log records the approval and the supersession, on a chain that verifies
    approval = events_of(store, claim_id)[-1]
    assert approval.event_type == "memory_approved" and approval.payload["superseded"] == [sor_id]
    assert approval.free_text == {"evidence_ref": "signed-2026-118"} and approval.payload["note_present"]
    assert set(approval.payload["evidence_ref"]) == {"side_text_sha256"}  # the chain keeps a digest
    assert events_of(store, sor_id)[-1].reason == "superseded_by_approval"
    assert verify_chain(TENANT, events_of(store)).ok


def test_given_a_pending_record_when_rejected_then_rejected_and_the_active_one_stays(
    review, store, pending_claim
):
    # Given a discount claim waiting for approval
    sor_id, claim_id = pending_claim
    # When a reviewer rejects it
    result = review.reject(REVIEWER, claim_id, note="no amendment signed")
    # Then it is rejected with the reviewer's reason, and the price stays active
    assert result.memory.status is Status.REJECTED and result.superseded == []
    assert result.memory.reasons[-1] == "rejected_by_reviewer"
    assert record(store, sor_id).status is Status.ACTIVE
    assert events_of(store, claim_id)[-1].reason == "reviewer_rejected"
    # and a decided record cannot be decided again
    with pytest.raises(Conflict):
        review.approve(REVIEWER, claim_id, note=None, evidence_ref="x")


def test_given_a_record_unknown_above_clearance_or_by_a_non_reviewer_when_reviewed_then_refused(
    review, store, pending_claim
):
    # Given a pending commercial claim (confidential)
    _, claim_id = pending_claim
    assert record(store, claim_id).sensitivity is Sensitivity.CONFIDENTIAL
    # When an agent approves it, a reviewer below its clearance rejects it, and an unknown id is reviewed
    with pytest.raises(UnauthorizedMutation):
        review.approve(AGENT, claim_id, note=None, evidence_ref="x")
    with pytest.raises(NotFound):
        review.reject(JUNIOR, claim_id, note=None)
    with pytest.raises(NotFound):
        review.reject(REVIEWER, "mem_absent", note=None)
    # Then nothing changed
    assert record(store, claim_id).status is Status.PENDING_APPROVAL


def contest(gateway: WriteGateway) -> tuple[str, str]:
    """An active preference the customer confirmed, and a later customer claim contradicting it."""
    active = gateway.write(
        AGENT,
        w(
            type="preference",
            category=None,
            slot=CHANNEL,
            content="Send renewal paperwork by email, never by phone.",
            source={"kind": "customer_confirmed"},
        ),
    )
    newcomer = gateway.write(
        AGENT,
        w(
            type="preference",
            category=None,
            slot=CHANNEL,
            content="Courier the renewal paperwork to the head office, never by email.",
            source={"kind": "customer_claim"},
            effective_at=T0 + timedelta(days=1),
        ),
    )
    assert newcomer.decision is Decision.CONTESTED
    return active.memory.id, newcomer.memory.id


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_given_a_contested_record_when_the_reviewer_decides_then_the_marker_leaves_both(
    review, gateway, store, decision
):
    # Given an active preference and a contradicting claim, both marked contested
    active_id, newcomer_id = contest(gateway)
    assert "contested" in record(store, active_id).flags and "contested" in record(store, newcomer_id).flags
    # When the reviewer approves or rejects the claim
    if decision == "approve":
        result = review.approve(REVIEWER, newcomer_id, note=None, evidence_ref=None)
        assert result.superseded == [active_id] and result.memory.status is Status.ACTIVE
    else:
        result = review.reject(REVIEWER, newcomer_id, note=None)
        assert result.memory.status is Status.REJECTED
    # Then neither record carries the marker any more
    assert "contested" not in record(store, active_id).flags
    assert "contested" not in record(store, newcomer_id).flags


def test_given_two_contesting_claims_when_one_is_rejected_then_the_active_one_stays_marked(
    review, gateway, store
):
    # Given an active preference contested by two claims
    active_id, first = contest(gateway)
    second = gateway.write(
        AGENT,
        w(
            type="preference",
            category=None,
            slot=CHANNEL,
            content="Only ever call the CFO about renewals.",
            source={"kind": "customer_claim"},
            effective_at=T0 + timedelta(days=2),
        ),
    )
    assert second.decision is Decision.CONTESTED
    # When one claim is rejected
    review.reject(REVIEWER, first, note=None)
    # Then the active record keeps the marker while the other still waits, and loses it after
    assert "contested" in record(store, active_id).flags
    review.reject(REVIEWER, second.memory.id, note=None)
    assert "contested" not in record(store, active_id).flags
    assert [e.reason for e in events_of(store, active_id)][-1] == "contest_resolved_by_reviewer"


def test_given_a_superseded_version_when_reinstated_then_a_new_version_supersedes_the_current_one(
    review, gateway, store
):
    # Given two versions of a slot from the system of record
    v1 = gateway.write(
        INTEGRATION,
        w(category="STAKEHOLDER", slot="stakeholder.primary_contact", content="Dana is the primary contact"),
    )
    v2 = gateway.write(
        INTEGRATION,
        w(
            category="STAKEHOLDER",
            slot="stakeholder.primary_contact",
            content="Lee is the primary contact",
            effective_at=T0 + timedelta(days=31),
        ),
    )
    assert v2.superseded == [v1.memory.id]
    # When a reviewer reinstates the first
    back = review.reinstate(REVIEWER, v1.memory.id, note="sync error")
    # Then a third version with the first's content supersedes the second, and the first stays superseded
    assert back.superseded == [v2.memory.id]
    assert back.memory.content == "Dana is the primary contact" and back.memory.version == 3
    assert back.memory.authority is Authority.HUMAN_VERIFIED and back.memory.supersedes_id == v2.memory.id
    assert record(store, v1.memory.id).status is Status.SUPERSEDED
    assert record(store, v2.memory.id).status is Status.SUPERSEDED
    with store.tenant(TENANT) as s:
        assert s.active_for_slot("ACC-1", "stakeholder.primary_contact").id == back.memory.id
    assert events_of(store, back.memory.id)[-1].reason == "reviewer_reinstated"
    # and an active version cannot be reinstated
    with pytest.raises(Conflict):
        review.reinstate(REVIEWER, back.memory.id, note=None)


def test_given_a_version_that_does_not_validate_when_reinstated_then_nothing_is_built(gateway, store):
    # Given a superseded version whose confidence is out of range (a copy that skipped validation)
    v1 = gateway.write(
        INTEGRATION,
        w(category="STAKEHOLDER", slot="stakeholder.primary_contact", content="Dana is the primary contact"),
    )
    bad = record(store, v1.memory.id).model_copy(update={"confidence": 1.5, "status": Status.SUPERSEDED})
    # When the reinstated version is built from it
    # Then validation refuses it, naming the field, instead of a record the store would keep
    with pytest.raises(ValidationError, match="confidence"):
        _reinstated_version(bad, None, REVIEWER, T0)
    # and a valid one is built as a new active, human-verified version
    good = _reinstated_version(record(store, v1.memory.id), None, REVIEWER, T0)
    assert good.id != v1.memory.id and good.status is Status.ACTIVE and good.version == 2
    assert good.authority is Authority.HUMAN_VERIFIED and good.source.reference == v1.memory.id
