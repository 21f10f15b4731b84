"""The record repository's contract (ports/repositories.py), as the write gateway and the review
service rely on it: the same tests pass on the in-memory fake and on PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
from contract_helpers import T0, put, record, vector

from agent_memory.domain.enums import Authority, Status
from agent_memory.ports.batch import ContextQuery
from agent_memory.ports.store import RetryableConflict


def test_given_a_stored_record_when_read_in_a_later_transaction_then_it_is_the_record_written(store, tenant):
    # Given a record written and committed
    written = record(tenant, value={"name": "Dana Ortiz", "seats": 40}, lineage_keys=["session:s1"])
    put(store, tenant, written)
    # When it is read back
    with store.tenant(tenant) as s:
        got = s.get_record(written.id)
        active = s.active_for_slot("S-1", "stakeholder.primary_contact")
        missing = s.get_record("mem_absent")
    # Then every field is as written, and it is the slot's active record
    assert got == written
    assert active == written
    assert missing is None


def test_given_records_of_a_subject_when_listed_then_newest_first_filtered_and_paged(store, tenant):
    # Given three records of one subject, one pending review, and one of another subject
    old = record(tenant, slot=None, type="episode", category="EPISODE", content="one", created_at=T0)
    mid = record(
        tenant,
        slot=None,
        type="episode",
        category="EPISODE",
        content="two",
        status="pending_approval",
        created_at=T0 + timedelta(minutes=1),
    )
    new = record(
        tenant,
        slot=None,
        type="episode",
        category="EPISODE",
        content="three",
        created_at=T0 + timedelta(minutes=2),
    )
    other = record(tenant, subject="S-2", slot=None, type="episode", category="EPISODE", content="four")
    put(store, tenant, old, mid, new, other)
    with store.tenant(tenant) as s:
        # When the subject's active records are listed, then a page after the newest
        active = s.list_subject(
            "S-1", statuses=["active"], types=None, max_sensitivity_rank=3, before=None, limit=10
        )
        page = s.list_subject(
            "S-1",
            statuses=["active", "pending_approval"],
            types=["episode"],
            max_sensitivity_rank=3,
            before=(new.created_at, new.id),
            limit=1,
        )
        queue = s.review_queue(limit=10, before=None, max_sensitivity_rank=3)
    # Then the newest comes first, statuses filter, the cursor pages, the queue holds the pending one
    assert [r.id for r in active] == [new.id, old.id]
    assert [r.id for r in page] == [mid.id]
    assert [r.id for r in queue] == [mid.id]


def test_given_an_active_record_of_a_slot_when_a_second_active_one_is_inserted_then_refused_and_rolled_back(
    store, tenant
):
    # Given the slot's active record
    first = record(tenant)
    put(store, tenant, first)
    # When another active record of the same slot is inserted in a transaction that also wrote elsewhere
    unrelated = record(tenant, subject="S-9")
    with pytest.raises(RetryableConflict), store.tenant(tenant) as s:
        s.insert_record(unrelated, None)
        s.insert_record(record(tenant, content="Lee Park is the primary contact"), None)
    # Then it is refused, nothing of that transaction stays, and the first is still the active one
    with store.tenant(tenant) as s:
        assert s.active_for_slot("S-1", "stakeholder.primary_contact") == first
        assert s.get_record(unrelated.id) is None


def test_given_a_pending_record_when_approved_while_the_slot_has_an_active_one_then_refused(store, tenant):
    # Given an active record and a pending one of the same slot
    active = record(tenant)
    pending = record(tenant, content="Lee Park is the primary contact", status="pending_approval")
    put(store, tenant, active, pending)
    # When the pending one is made active without superseding the first
    with pytest.raises(RetryableConflict), store.tenant(tenant) as s:
        s.update_status(pending.id, "active")
    # Then the database's one-active-per-slot rule refused it
    with store.tenant(tenant) as s:
        assert s.get_record(pending.id).status is Status.PENDING_APPROVAL


def test_given_an_active_version_when_superseded_then_the_new_version_is_active_and_the_old_one_closed(
    store, tenant
):
    # Given the slot's active version
    old = record(tenant)
    put(store, tenant, old)
    at = T0 + timedelta(days=1)
    new = record(
        tenant, content="Lee Park is the primary contact", version=2, supersedes_id=old.id, created_at=at
    )
    # When it is superseded by a new version in one transaction
    with store.tenant(tenant) as s:
        s.supersede(old.id, new.id, at)
        s.insert_record(new, None)
        # a second supersession of a version no longer active changes nothing
        s.supersede(old.id, "mem_other", at + timedelta(days=1))
    # Then the new one is active, the old one superseded by it, and the history holds both in order
    with store.tenant(tenant) as s:
        closed = s.get_record(old.id)
        assert s.active_for_slot("S-1", "stakeholder.primary_contact") == new
        history = s.slot_history("S-1", "stakeholder.primary_contact")
    assert closed.status is Status.SUPERSEDED
    assert (closed.superseded_by_id, closed.superseded_at, closed.valid_to) == (new.id, at, at)
    assert [r.id for r in history] == [old.id, new.id]


def test_given_a_pending_record_when_its_status_is_updated_then_the_record_as_it_now_is(store, tenant):
    # Given a pending record
    pending = record(tenant, status="pending_approval", authority="agent_inference")
    put(store, tenant, pending)
    with store.tenant(tenant) as s:
        # When it is approved with review fields
        approved = s.update_status(
            pending.id,
            "active",
            authority="human_verified",
            verified_by="reviewer-1",
            verified_at=T0,
            reasons=["approved_by_reviewer"],
        )
        # and fields no review changes, or a record that is absent, are refused
        with pytest.raises(ValueError, match="not updatable"):
            s.update_status(pending.id, "active", tenant_id="other")
        with pytest.raises(LookupError):
            s.update_status("mem_absent", "active")
    # Then the updated record comes back and is stored
    assert approved.status is Status.ACTIVE and approved.authority is Authority.HUMAN_VERIFIED
    assert approved.verified_by == "reviewer-1" and approved.reasons == ["approved_by_reviewer"]
    with store.tenant(tenant) as s:
        assert s.get_record(pending.id) == approved


def test_given_records_when_the_admission_context_is_read_then_active_oldest_live_duplicate_and_tombstones(
    store, tenant
):
    # Given the slot's active record, a later rejected copy of its content, and a forgotten memory
    active = record(tenant)
    rejected_copy = record(tenant, slot=None, status="rejected", created_at=T0 - timedelta(days=1))
    rejected_copy = rejected_copy.model_copy(update={"content_hash": active.content_hash})
    closed = record(
        tenant,
        type="commitment",
        category="COMMITMENT",
        slot=None,
        content="Send the renewal quote",
        value={"state": "closed"},
    )
    put(store, tenant, active, rejected_copy, closed)
    with store.tenant(tenant) as s:
        s.tombstone_memory(
            memory_id="mem_forgotten",
            subject_id="S-1",
            memory_type="fact",
            slot="billing.contact",
            content_hashes=["hash-forgotten"],
            lineage_keys=["session:forgotten"],
        )
    with store.tenant(tenant) as s:
        # When admission asks about the same content, a closed commitment's, and the forgotten one's
        same = s.admission_context(
            subject_id="S-1",
            memory_type="fact",
            slot="stakeholder.primary_contact",
            content_hash=active.content_hash,
            lineage_keys=[],
        )
        commitment = s.admission_context(
            subject_id="S-1",
            memory_type="commitment",
            slot=None,
            content_hash=closed.content_hash,
            lineage_keys=[],
        )
        by_hash = s.admission_context(
            subject_id="S-1", memory_type="fact", slot=None, content_hash="hash-forgotten", lineage_keys=[]
        )
        by_lineage_same = s.admission_context(
            subject_id="S-1",
            memory_type="fact",
            slot="billing.contact",
            content_hash="other",
            lineage_keys=["session:forgotten"],
        )
        by_lineage_other_slot = s.admission_context(
            subject_id="S-1",
            memory_type="fact",
            slot="billing.address",
            content_hash="other",
            lineage_keys=["session:forgotten"],
        )
    # Then the live record is the duplicate (not the rejected one, not a closed commitment), and a
    # tombstone refuses the same content, or the same memory drawn again from its lineage
    assert same.active == active and same.duplicate == active and not same.tombstoned and not same.erasing
    assert commitment.duplicate is None and commitment.active is None
    assert by_hash.tombstoned and by_lineage_same.tombstoned
    assert not by_lineage_other_slot.tombstoned


def test_given_vectors_when_a_near_duplicate_is_asked_for_then_the_nearest_above_the_threshold(store, tenant):
    # Given two active episodes with vectors, and a superseded one nearer still
    base = vector(1)
    near = record(tenant, type="episode", category="EPISODE", slot=None, content="QBR moved to March")
    far = record(tenant, type="episode", category="EPISODE", slot=None, content="Asked about SSO")
    gone = record(
        tenant, type="episode", category="EPISODE", slot=None, content="QBR in March", status="superseded"
    )
    with store.tenant(tenant) as s:
        s.insert_record(near, vector(2, near=base, noise=0.3))
        s.insert_record(far, vector(3))
        s.insert_record(gone, base)
    with store.tenant(tenant) as s:
        # When the nearest is asked for, with a threshold it meets and one it does not
        found = s.near_duplicate(
            subject_id="S-1", memory_type="episode", slot=None, embedding=base, min_similarity=0.9
        )
        strict = s.near_duplicate(
            subject_id="S-1", memory_type="episode", slot=None, embedding=base, min_similarity=0.999
        )
        other_subject = s.near_duplicate(
            subject_id="S-2", memory_type="episode", slot=None, embedding=base, min_similarity=0.0
        )
        [prefetched] = s.admission_contexts(
            [ContextQuery("S-1", "episode", None, "h", [], base)], min_similarity=0.999
        )
    # Then the served record nearest is found above its threshold only, within the subject; the
    # batch's read names it whatever its similarity
    assert found == near and strict is None and other_subject is None
    assert prefetched.nearest == near
    assert prefetched.nearest_similarity == pytest.approx(
        float(base @ vector(2, near=base, noise=0.3)), abs=1e-4
    )


def test_given_contested_records_when_a_slot_is_settled_then_the_active_keeps_the_marker_only_while_one_waits(
    store, tenant
):
    # Given an active record and a contested one of its slot, both marked
    active = record(tenant)
    contested = record(tenant, content="Lee Park is the primary contact", status="contested")
    put(store, tenant, active, contested)
    with store.tenant(tenant) as s:
        s.mark_contested([active.id, contested.id])
        s.mark_contested([active.id])  # once only
        # When the slot is settled while the contested one still waits
        waiting = s.settle_slot_contest("S-1", "stakeholder.primary_contact")
        marked = s.get_record(active.id).flags
        # and after it is decided
        s.update_status(contested.id, "rejected")
        s.clear_contested([contested.id])
        after = s.settle_slot_contest("S-1", "stakeholder.primary_contact")
        no_slot = s.settle_slot_contest("S-1", "billing.contact")
        flags = s.get_record(active.id).flags, s.get_record(contested.id).flags
    # Then the marker stays exactly while one waits
    assert waiting is True and marked == ["contested"]
    assert after is False and no_slot is False
    assert flags == ([], [])


def test_given_a_batch_when_persisted_then_supersessions_first_then_records(store, tenant):
    # Given the slot's active version
    old = record(tenant)
    put(store, tenant, old)
    new = record(tenant, content="Lee Park is the primary contact", version=2, supersedes_id=old.id)
    episode = record(tenant, type="episode", category="EPISODE", slot=None, content="Asked about SSO")
    # When a batch supersedes it and writes two records
    with store.tenant(tenant) as s:
        s.persist_admitted(
            supersessions=[(old.id, new.id, T0)], records=[(new, vector(5)), (episode, None)], sentences=[]
        )
    # Then both are stored and the slot has one active version
    with store.tenant(tenant) as s:
        assert s.records_by_id({old.id, new.id, episode.id, "mem_absent"}).keys() == {
            old.id,
            new.id,
            episode.id,
        }
        assert s.active_for_slot("S-1", "stakeholder.primary_contact") == new
