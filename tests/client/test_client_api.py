"""The client against the real local HTTP front: every route through its method, answers parsed
into the client's models with no field the models do not know, errors as typed exceptions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from agent_memory_client import (
    Conflict,
    Forbidden,
    InvalidRequest,
    MemoryClient,
    MemoryWrite,
    NotFound,
    PayloadTooLarge,
    Source,
    Unauthenticated,
    _calls,
    models,
)

from agent_memory.local.worker import QueuePoller

pytestmark = pytest.mark.e2e

SUBJECT = "alice@example.com"  # `@` in a path: percent-encoded once by the client, decoded once by the server


@pytest.fixture(scope="module")
def agent(clients):
    return clients("agent")


@pytest.fixture(scope="module")
def integration(clients):
    return clients("integration")


@pytest.fixture(scope="module")
def seat_price(integration):
    """A system-of-record fact about the subject, admitted."""
    return integration.write_memory(
        subject_id=SUBJECT,
        type="fact",
        category="CONTRACT_COMMERCIAL",
        slot="contract.seat_price",
        content="Enterprise license renewed for 500 seats at $42/seat/month.",
        value={"seats": 500, "price_per_seat_month": 42},
        source={"kind": "system_of_record", "system": "crm", "reference": "CTR-118"},
    )


def test_health_answers_in_its_model(unknown_fields, clients):
    # Given a client without a token (health needs none)
    # When it asks for health
    health = MemoryClient(clients("agent").base_url).health()
    # Then the answer is the Health model, with every field known
    assert health.status == "ok" and health.database == "ok"
    assert unknown_fields(health) == []


def test_a_write_is_admitted_and_read_back_under_a_subject_with_an_at_sign(unknown_fields, agent, seat_price):
    # Given a fact written by the integration (fixture)
    assert seat_price.decision == "admitted" and seat_price.memory is not None
    assert seat_price.memory.subject_id == SUBJECT
    assert unknown_fields(seat_price) == []
    # When the agent reads it and lists the subject's memories
    detail = agent.get_memory(seat_price.memory.id)
    page = agent.list_memories(SUBJECT, status="active")
    # Then both name the record, with its version chain, and nothing unknown
    assert detail.content.startswith("Enterprise license") and detail.verified is True
    assert [h.id for h in detail.history] == [seat_price.memory.id]
    assert seat_price.memory.id in {r.id for r in page.memories}
    assert unknown_fields(detail) == [] and unknown_fields(page) == []


def test_a_retried_write_is_stored_once(agent):
    # Given one prepared write (the client gave it an idempotency key)
    call = _calls.write_memory(
        MemoryWrite(
            subject_id=SUBJECT,
            type="preference",
            slot="preference.contact_channel",
            content="Prefers email over phone.",
            source=Source(kind="customer_claim"),
        ),
        {},
    )
    assert call.json["idempotency_key"].startswith("client:")
    # When it is sent twice, as a retry after a lost answer would
    first = agent._send(call)
    second = agent._send(call)
    # Then the second is the first one replayed: one memory
    assert first.memory is not None and second.memory is not None
    assert second.memory.id == first.memory.id
    contact = [r for r in agent.iter_memories(SUBJECT) if r.slot == "preference.contact_channel"]
    assert [r.id for r in contact] == [first.memory.id]


def test_iter_memories_walks_every_page(agent, integration):
    # Given five facts about one subject
    subject = "bob+pages@example.com"
    written = {
        integration.write_memory(
            subject_id=subject,
            type="fact",
            category="ACCOUNT_PROFILE",
            slot=f"account.note_{i}",
            content=f"Account note number {i} about the rollout.",
            source={"kind": "system_of_record", "system": "crm", "reference": f"N-{i}"},
        ).memory.id
        for i in range(5)
    }
    # When they are listed two at a time
    first = agent.list_memories(subject, limit=2)
    seen = [r.id for r in agent.iter_memories(subject, page_size=2)]
    # Then the first page has a cursor and the iterator reaches all five, once each
    assert len(first.memories) == 2 and first.next_cursor
    assert sorted(seen) == sorted(written) and len(seen) == 5


def test_retrieve_and_resolution_search(unknown_fields, agent, seat_price):
    # When the agent asks about the renewal
    result = agent.retrieve(SUBJECT, "How many seats did they renew and at what price?", top_k=5)
    search = agent.search_resolutions("renewal seats price", top_k=3)
    # Then the fact comes back in the context and in the typed memories
    assert seat_price.memory.id in {mem.id for mem in result.memories}
    assert seat_price.memory.id in result.context
    assert result.subject_id == SUBJECT and result.tokens <= result.max_tokens
    assert unknown_fields(result) == []
    assert search.tokens <= search.max_tokens and unknown_fields(search) == []


def test_working_memory_set_get_delete_and_in_retrieval(unknown_fields, agent):
    # Given a working value of an open session
    item = agent.working_set("sess-w1", "draft@reply", {"step": 2}, subject_id=SUBJECT, ttl_seconds=120)
    assert item.key == "draft@reply" and item.value == {"step": 2}
    # When it is read, retrieved with the session, then deleted
    held = agent.working_get("sess-w1")
    retrieved = agent.retrieve(SUBJECT, "what step are we on", session_id="sess-w1")
    assert agent.working_delete("sess-w1", "draft@reply") is None
    after = agent.working_get("sess-w1")
    # Then it was there, in retrieval's working section, and is gone
    assert [i.key for i in held.items] == ["draft@reply"] and unknown_fields(held) == []
    assert [w.key for w in retrieved.working or []] == ["draft@reply"]
    assert after.items == []


def test_close_session_waits_until_extraction_is_done(unknown_fields, agent, local_aws):
    # Given the extraction worker polling the queue
    poller = QueuePoller(local_aws.queue_url, endpoint_url=local_aws.endpoint_url, region="us-east-1")
    poller.start()
    try:
        # When a session is closed with wait=True
        status = agent.close_session(
            "sess-close-1",
            subject_id=SUBJECT,
            occurred_at=datetime(2026, 10, 2, 15, tzinfo=UTC),
            channel="chat",
            turns=[
                {"speaker": "customer", "text": "I prefer phone calls in the morning."},
                {"speaker": "agent", "text": "Noted."},
            ],
            wait=True,
            timeout=120,
            poll_interval=0.2,
        )
    finally:
        poller.stop()
    # Then it returns the processed session, with what became of its memories
    assert isinstance(status, models.SessionStatus)
    assert status.status == "processed" and status.done
    assert status.admitted + status.pending_approval + status.duplicate >= 1
    assert unknown_fields(status) == []
    # and closing again without waiting answers the accepted shape
    again = agent.close_session(
        "sess-close-1",
        {
            "subject_id": SUBJECT,
            "occurred_at": "2026-10-02T15:00:00Z",
            "channel": "chat",
            "turns": [
                {"speaker": "customer", "text": "I prefer phone calls in the morning."},
                {"speaker": "agent", "text": "Noted."},
            ],
        },
    )
    assert isinstance(again, models.SessionAccepted) and again.session_id == "sess-close-1"


def test_review_approve_reject_reinstate(unknown_fields, clients, agent):
    reviewer = clients("reviewer")
    # Given two commercial claims the gateway holds for approval
    held = [
        agent.write_memory(
            subject_id=SUBJECT,
            type="fact",
            category="CONTRACT_COMMERCIAL",
            slot=slot,
            content=content,
            source={"kind": "agent_inference"},
        )
        for slot, content in (
            ("contract.discount", "A 15% discount was offered on the renewal."),
            ("contract.payment_terms", "Payment terms are net 60 days."),
        )
    ]
    assert [w.decision for w in held] == ["pending_approval", "pending_approval"]
    # When the reviewer walks the queue, approves one and rejects the other
    queued = {item.memory.id for item in reviewer.iter_review_queue(page_size=1)}
    approved = reviewer.approve(
        held[0].memory.id,
        note="checked",
        evidence_ref="signed-contract-2026-118",
        independent_reason="the discount applies on top of the seat price",
    )
    rejected = reviewer.reject(held[1].memory.id, note="not agreed")
    # Then both were queued, one is active and verified, the other rejected
    assert {w.memory.id for w in held} <= queued
    assert approved.memory.status == "active" and approved.memory.verified
    assert rejected.memory.status == "rejected"
    assert unknown_fields(approved) == [] and unknown_fields(reviewer.review_queue()) == []
    # and an agent may not approve: Forbidden, with the code and the request id
    with pytest.raises(Forbidden) as refused:
        agent.approve(held[1].memory.id)
    assert refused.value.code == "unauthorized_memory_mutation" and refused.value.request_id
    # and reinstating a record that is not superseded is a conflict
    with pytest.raises(Conflict):
        reviewer.reinstate(held[0].memory.id, note="roll back")


def test_commitments_close_and_memories_revalidate(unknown_fields, agent, seat_price):
    # Given a commitment the agent made
    promise = agent.write_memory(
        subject_id=SUBJECT,
        type="commitment",
        content="Send the renewal quote by Friday.",
        source={"kind": "agent_inference"},
    )
    # When it is closed, and the fact confirmed still true
    closed = agent.close_commitment(promise.memory.id, outcome="done", note="sent")
    confirmed = agent.revalidate(seat_price.memory.id)
    # Then the commitment carries its outcome and the fact was validated just now
    assert closed.memory.value["outcome"] == "done" and unknown_fields(closed) == []
    assert confirmed.last_validated_at is not None
    assert confirmed.last_validated_at > datetime.now(UTC) - timedelta(minutes=5)
    assert confirmed.needs_revalidation is False and unknown_fields(confirmed) == []


def test_privacy_officer_holds_exports_forgets_and_erases(unknown_fields, clients, agent, integration):
    dpo = clients("privacy_officer")
    subject = "carol:export@example.com"
    ids = [
        integration.write_memory(
            subject_id=subject,
            type="fact",
            category="ACCOUNT_PROFILE",
            slot=f"account.item_{i}",
            content=f"Item {i} of the account.",
            source={"kind": "system_of_record", "system": "crm", "reference": f"I-{i}"},
        ).memory.id
        for i in range(3)
    ]
    # When the privacy officer sets holds and clears them
    on = dpo.legal_hold_subject(subject, hold=True, reason="case 7")
    off = dpo.legal_hold_subject(subject, hold=False, reason="case 7 closed")
    record = dpo.legal_hold_memory(ids[0], hold=True, reason="case 8")
    dpo.legal_hold_memory(ids[0], hold=False, reason="case 8 closed")
    assert (on.legal_hold, off.legal_hold, record.legal_hold) == (True, False, True)
    assert on.subject_id == subject and record.memory_id == ids[0]
    # and exports the subject two entries per page (one per page never ends: each page adds an
    # export event to the trail it walks)
    pages = list(dpo.iter_export(subject, page_size=2))
    exported = {mem.id for page in pages for mem in page.memories}
    assert set(ids) <= exported and len(pages) > 2 and pages[-1].next_cursor is None
    assert all(unknown_fields(p) == [] for p in pages)
    # and forgets one memory, then erases the subject
    forgotten = dpo.delete_memory(ids[1], reason="customer asked")
    assert forgotten.id == ids[1] and forgotten.status == "deleted"
    after = agent.get_memory(ids[1])
    assert after.status == "deleted" and "Item 1" not in after.content
    with pytest.raises(NotFound) as unknown:
        agent.get_memory("mem_0000000000000000000000000000")
    assert unknown.value.code == "not_found" and unknown.value.status == 404
    erasure = dpo.request_erasure(subject, reason="gdpr_article_17", request_reference="DSR-991", wait=True)
    status = dpo.get_erasure(erasure.erasure_id)
    assert erasure.subject_id == subject and status.erasure_id == erasure.erasure_id
    # Then waiting returned the verified erasure, and nothing of the subject is left to read
    assert erasure.status == status.status == "verified" and unknown_fields(status) == []
    with pytest.raises(NotFound):
        agent.get_memory(ids[0])


def test_audit_pages_and_policy(unknown_fields, clients, seat_price):
    auditor = clients("auditor")
    admin = clients("admin")
    # When the auditor reads the subject's trail two events at a time
    first = auditor.audit(subject_id=SUBJECT, limit=2)
    events = list(auditor.iter_audit(subject_id=SUBJECT, page_size=2))
    since = list(auditor.iter_audit(since=datetime.now(UTC) + timedelta(days=1)))
    # Then the pages chain into the whole trail, oldest hash links intact
    assert len(first.events) == 2 and first.next_cursor
    assert len(events) > 2 and len({e.id for e in events}) == len(events)
    assert all(e.subject_id == SUBJECT for e in events) and since == []
    assert unknown_fields(first) == []
    # and the admin reads and sets the policy
    policy = admin.get_policy()
    changed = admin.put_policy(policy.profile, {"retrieval_top_k": 3})
    assert changed.effective["retrieval_top_k"] == 3 and changed.overrides == {"retrieval_top_k": 3}
    assert unknown_fields(policy) == []
    admin.put_policy(policy.profile, policy.overrides)


def test_errors_are_typed_with_code_field_and_request_id(clients, agent):
    # A value the server refuses names the field
    with pytest.raises(InvalidRequest) as invalid:
        agent.retrieve(SUBJECT, "anything", top_k=0)
    assert invalid.value.status == 422 and invalid.value.field == "top_k" and invalid.value.request_id
    # A body over the limit
    with pytest.raises(PayloadTooLarge) as too_large:
        agent.write_memory(
            subject_id=SUBJECT,
            type="fact",
            category="ACCOUNT_PROFILE",
            content="x" * 300_000,
            source={"kind": "agent_inference"},
        )
    assert too_large.value.code == "payload_too_large"
    # A token the server does not accept
    stranger = MemoryClient(agent.base_url, token="not-a-token")
    with pytest.raises(Unauthenticated) as unauthenticated:
        stranger.retrieve(SUBJECT, "anything")
    assert unauthenticated.value.code == "unauthenticated" and unauthenticated.value.status == 401
    stranger.close()
    # A path value outside the id rule is refused by the server, not mangled by the client
    with pytest.raises(InvalidRequest) as bad_id:
        agent.list_memories("a/b c")
    assert bad_id.value.field == "subject_id"


def test_the_openapi_document_and_the_docs_page(agent):
    document = agent.openapi()
    page = agent.docs()
    assert "/v1/retrieve" in document["paths"]
    assert page.lstrip().lower().startswith("<!doctype html")


def test_from_env_reads_memory_url_and_memory_token_like_the_mcp_server(api, monkeypatch):
    # Given MEMORY_URL and MEMORY_TOKEN, as the MCP server reads them
    monkeypatch.setenv("MEMORY_URL", api.base)
    monkeypatch.setenv("MEMORY_TOKEN", api.token("client-tests", "agent-env", ["agent"], subjects=[SUBJECT]))
    # When a client is made from the environment and writes a note with only a subject and content
    with MemoryClient.from_env() as memory:
        written = memory.remember(SUBJECT, "Prefers to get the renewal quote by email.", session_id="env-1")
    # Then it reached the service with that token: the gateway decided, for that subject
    assert written.decision in {"admitted", "pending_approval", "quarantined", "rejected", "contested"}
    assert written.memory is None or written.memory.subject_id == SUBJECT


def test_remember_sends_a_content_only_note_and_a_typed_write_only_as_the_fallback():
    # Given a note with only a subject, content and session
    first, fallback = _calls.remember(SUBJECT, "Sam Lee now signs renewals.", {"session_id": "s-1"})
    # Then the body is exactly what the service classifies, and the fallback is an agent's typed write
    assert first.json == {
        "subject_id": SUBJECT,
        "content": "Sam Lee now signs renewals.",
        "session_id": "s-1",
    }
    assert fallback is not None
    assert fallback.json["type"] == "observation" and fallback.json["source"] == {"kind": "customer_claim"}
    # And a note with a hint goes typed at once
    typed, none = _calls.remember(SUBJECT, "Prefers email.", {"slot": "preference.contact_channel"})
    assert none is None and typed.json["type"] == "preference"


def test_an_empty_recall_says_how_many_fell_below_the_relevance_floor(agent):
    from agent_memory_client._tooling import recall_note

    subject = "floor.customer@example.com"
    # Given one memory about something else entirely
    agent.write_memory(
        subject_id=subject,
        type="preference",
        slot="preference.meeting_time",
        content="Prefers meetings on Tuesday mornings.",
        source={"kind": "customer_claim"},
    )
    # When a query shares nothing with it
    found = agent.retrieve(subject, "quantum chromodynamics lattice")
    # Then nothing is returned, the answer carries the floor, and the note names both
    assert found.memories == [] and found.excluded.get("below_threshold") == 1
    assert found.relevance_floor is not None and 0 < found.relevance_floor < 1
    note = recall_note(found)
    assert (
        note is not None and "1 below the relevance floor" in note and f"{found.relevance_floor:.2f}" in note
    )
