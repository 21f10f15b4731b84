"""The audit log's, idempotency's and transactions' contract: the same tests pass on the in-memory
fake and on PostgreSQL."""

from __future__ import annotations

import itertools

import pytest
from contract_helpers import put, record

from agent_memory.domain.audit import verify_chain
from agent_memory.domain.hashing import GENESIS_HASH
from agent_memory.ports.store import IdempotentReply, NewEvent, RetryableConflict


def events(n: int, memory_id: str = "mem_1") -> list[NewEvent]:
    return [
        NewEvent("created", "agent-1", memory_id, "S-1", "admitted", {"i": i, "slot": None}) for i in range(n)
    ]


def test_given_events_appended_in_two_transactions_when_read_then_one_verified_chain(store, tenant):
    # Given a tenant with no events, then three and two appended in two transactions
    with store.tenant(tenant) as s:
        assert s.last_event_seq() == 0
        first = s.append_events(events(3))
    with store.tenant(tenant) as s:
        second = s.append_events(events(2, memory_id="mem_2"))
        assert s.append_events([]) == []
    # When the log is read back
    with store.tenant(tenant) as s:
        log = s.audit_events(subject_id=None, memory_id=None, since=None, after_seq=None, limit=100)
        of_second = s.audit_events(subject_id="S-1", memory_id="mem_2", since=None, after_seq=None, limit=100)
        after = s.audit_events(subject_id=None, memory_id=None, since=None, after_seq=3, limit=1)
        last = s.last_event_seq()
    # Then it is what was appended, in order, chained from the genesis hash, and it verifies
    assert log == [*first, *second]
    assert [e.seq for e in log] == [1, 2, 3, 4, 5] and last == 5
    assert log[0].prev_hash == GENESIS_HASH
    assert all(b.prev_hash == a.hash for a, b in itertools.pairwise(log))
    assert verify_chain(tenant, log).ok
    assert [e.seq for e in of_second] == [4, 5] and [e.seq for e in after] == [4]
    assert log[1].payload == {"i": 1, "slot": None}


def test_given_an_event_edited_after_the_fact_when_verified_then_the_chain_breaks_there(store, tenant):
    # Given a chain of three events
    with store.tenant(tenant) as s:
        s.append_events(events(3))
    with store.tenant(tenant) as s:
        log = s.audit_events(subject_id=None, memory_id=None, since=None, after_seq=None, limit=100)
    # When the second one's payload is changed
    log[1] = log[1].model_copy(update={"payload": {"i": 99}})
    # Then verification names it
    report = verify_chain(tenant, log)
    assert not report.ok and report.broken_at_seq == 2


def test_given_a_saved_reply_when_its_key_is_read_or_saved_again_then_replayed_or_refused(store, tenant):
    # Given a reply saved under a key
    reply = IdempotentReply("fp-1", {"decision": "admitted", "reasons": ["a"], "memory": None}, 201)
    with store.tenant(tenant) as s:
        s.save_idempotent_reply("key-1", reply, None, "S-1")
    # When it is read back, and saved again by a racing writer
    with store.tenant(tenant) as s:
        replayed = s.idempotent_reply("key-1")
        several = s.idempotent_replies({"key-1", "key-absent"})
        assert s.idempotent_reply("key-absent") is None
    with pytest.raises(RetryableConflict), store.tenant(tenant) as s:
        s.save_idempotent_reply("key-1", IdempotentReply("fp-2", {}, 201), None, "S-1")
    # Then the first reply is what the key answers
    assert replayed == reply and several == {"key-1": reply}
    with store.tenant(tenant) as s:
        assert s.idempotent_reply("key-1") == reply


def test_given_two_tenants_when_each_writes_then_neither_sees_the_other(store, tenant):
    # Given a record, an event, a reply and a policy in one tenant
    other = tenant + "-b"
    written = record(tenant)
    put(store, tenant, written)
    with store.tenant(tenant) as s:
        s.append_events(events(2))
        s.save_idempotent_reply("key-1", IdempotentReply("fp", {}, 201), written.id, "S-1")
        s.set_tenant_policy("strict", {"near_duplicate_similarity": 0.95})
    # When another tenant reads the same ids, slot, content and key, and writes its own events
    with store.tenant(other) as s:
        seen = (
            s.get_record(written.id),
            s.active_for_slot("S-1", "stakeholder.primary_contact"),
            s.idempotent_reply("key-1"),
            s.tenant_policy(),
        )
        context = s.admission_context(
            subject_id="S-1",
            memory_type="fact",
            slot="stakeholder.primary_contact",
            content_hash=written.content_hash,
            lineage_keys=[],
        )
        own = s.append_events(events(1))
    # Then it sees nothing of the first tenant, and its chain starts at the genesis
    assert seen == (None, None, None, None)
    assert context.active is None and context.duplicate is None
    assert own[0].seq == 1 and own[0].prev_hash == GENESIS_HASH
    with store.tenant(tenant) as s:
        assert s.tenant_policy() == ("strict", {"near_duplicate_similarity": 0.95})
        assert s.last_event_seq() == 2


def test_given_a_transaction_that_raises_when_it_ends_then_nothing_it_wrote_stays(store, tenant):
    # Given a committed record
    kept = record(tenant)
    put(store, tenant, kept)
    at = kept.created_at
    # When a transaction supersedes it, writes a record, events, a reply and a policy, then fails
    with pytest.raises(ZeroDivisionError), store.tenant(tenant) as s:
        s.supersede(kept.id, "mem_new", at)
        s.insert_record(record(tenant, slot=None, content="lost"), None)
        s.append_events(events(2))
        s.save_idempotent_reply("key-lost", IdempotentReply("fp", {}, 201), None, "S-1")
        s.set_tenant_policy("strict", {})
        s.mark_contested([kept.id])
        _ = 1 / 0
    # Then the tenant is as it was before it
    with store.tenant(tenant) as s:
        assert s.get_record(kept.id) == kept
        assert s.list_subject(
            "S-1", statuses=["active"], types=None, max_sensitivity_rank=3, before=None, limit=10
        ) == [kept]
        assert s.last_event_seq() == 0 and s.idempotent_reply("key-lost") is None
        assert s.tenant_policy() is None
    # and the chain continues from where it was
    with store.tenant(tenant) as s:
        assert s.append_events(events(1))[0].prev_hash == GENESIS_HASH
