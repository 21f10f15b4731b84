"""Nightly lifecycle on the real database: TTL purge, archive window, legal holds,
idempotence and resumability, consolidation and corroboration."""

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_memory.domain.commitments import CommitmentOutcome
from agent_memory.domain.enums import Role
from agent_memory.domain.records import MemoryWrite, Principal
from agent_memory.services.commitments import CommitmentService
from agent_memory.services.lifecycle import LifecycleService
from agent_memory.services.retrieval import RetrieveRequest

pytestmark = pytest.mark.integration
TENANT = "life"
AGENT = Principal(sub="agent", tenant_id=TENANT, roles=frozenset({Role.AGENT}))
DPO = Principal(sub="dpo", tenant_id=TENANT, roles=frozenset({Role.PRIVACY_OFFICER}))


def write(container, subject, content, **kw):
    body = {
        "subject_id": subject,
        "type": "sentiment",
        "content": content,
        "source": {"kind": "customer_claim"},
    }
    return container.gateway.write(AGENT, MemoryWrite.model_validate({**body, **kw}))


def lifecycle(container, now, batch_size=1000):
    return LifecycleService(
        container.store,
        container.policies,
        container.objects,
        transcript_ttl_days=7,
        clock=lambda: now,
        batch_size=batch_size,
    )


def row(container, memory_id):
    with container.db.tenant_transaction(TENANT) as conn:
        return conn.execute(
            "SELECT status, embedding IS NULL AS no_vec, content_tsv IS NULL AS no_fts"
            " FROM memory_records WHERE id = %s",
            (memory_id,),
        ).fetchone()


def test_a_short_ttl_sentiment_disappears_from_retrieval_and_then_from_the_database(container):
    now = datetime.now(UTC)
    note = write(
        container,
        "S-TTL",
        "Might move the whole team to the EU office soon",
        effective_at=now - timedelta(days=10),
        expires_at=now + timedelta(seconds=1),
    )
    later = now + timedelta(minutes=1)
    report = lifecycle(container, later).purge()
    assert report.expired >= 1
    assert dict(row(container, note.memory.id)) == {"status": "expired", "no_vec": True, "no_fts": True}
    got = container.broker.retrieve(
        AGENT, RetrieveRequest(subject_id="S-TTL", query="move the team to the EU office")
    )
    assert got.memories == []
    # after the archive window it is gone from the table
    lifecycle(container, later + timedelta(days=31)).purge()
    assert row(container, note.memory.id) is None


def test_legal_hold_exempts_from_the_purge_and_is_audited(container):
    now = datetime.now(UTC)
    held = write(
        container,
        "S-HOLD",
        "Considering a complaint to the ombudsman",
        effective_at=now - timedelta(days=10),
        expires_at=now + timedelta(seconds=1),
    )
    container.lifecycle.set_subject_hold(DPO, "S-HOLD", hold=True, reason="litigation LIT-7")
    report = lifecycle(container, now + timedelta(hours=1)).purge()
    assert row(container, held.memory.id)["status"] == "active" and report.held >= 1
    container.lifecycle.set_subject_hold(DPO, "S-HOLD", hold=False, reason="litigation closed")
    lifecycle(container, now + timedelta(hours=1)).purge()
    assert row(container, held.memory.id)["status"] == "expired"
    with container.db.tenant_transaction(TENANT) as conn:
        reasons = [
            r["reason"]
            for r in conn.execute(
                "SELECT reason FROM memory_events WHERE subject_id = 'S-HOLD' ORDER BY seq"
            ).fetchall()
        ]
    assert "legal_hold_set" in reasons and "legal_hold_cleared" in reasons


def test_dry_run_changes_nothing_and_reruns_are_idempotent(container):
    now = datetime.now(UTC)
    topics = [
        "hiring in Berlin",
        "a second data center",
        "moving to annual billing",
        "a partner program",
        "dropping the legacy plugin",
    ]
    ids = [
        write(
            container,
            "S-DRY",
            f"Thinking about {topic}",
            effective_at=now - timedelta(days=5),
            expires_at=now + timedelta(seconds=1),
        ).memory.id
        for topic in topics
    ]
    later = now + timedelta(minutes=5)
    dry = lifecycle(container, later).purge(dry_run=True)
    assert dry.expired >= 5 and all(row(container, i)["status"] == "active" for i in ids)
    first = lifecycle(container, later).purge()
    second = lifecycle(container, later).purge()
    assert first.expired >= 5 and second.expired == 0


def test_a_purge_that_crashes_midway_resumes(container, monkeypatch):
    now = datetime.now(UTC)
    topics = [
        "renewing early",
        "a price freeze",
        "switching regions",
        "a hackathon",
        "new SSO vendor",
        "a board meeting in May",
        "cutting the pilot short",
    ]
    ids = [
        write(
            container,
            "S-CRASH",
            f"Perhaps {topic}",
            effective_at=now - timedelta(days=5),
            expires_at=now + timedelta(seconds=1),
        ).memory.id
        for topic in topics
    ]
    later = now + timedelta(minutes=10)
    service = lifecycle(container, later, batch_size=3)
    calls = {"n": 0}
    original = service.store.tenant

    def crash_after_first_batch(tenant_id):
        calls["n"] += 1
        if calls["n"] == 2:
            raise ConnectionError("lambda timed out")
        return original(tenant_id)

    monkeypatch.setattr(service.store, "tenant", crash_after_first_batch)
    with pytest.raises(ConnectionError):
        service.purge(tenants=[TENANT], consolidate=False)
    monkeypatch.undo()
    statuses = [row(container, i)["status"] for i in ids]
    assert 0 < statuses.count("expired") < 7  # the first batch committed, the rest did not
    lifecycle(container, later, batch_size=3).purge(tenants=[TENANT])
    assert all(row(container, i)["status"] == "expired" for i in ids)


def test_consolidation_merges_duplicates_keeping_provenance_shortest_retention_strictest_sensitivity(
    container,
):
    now = datetime.now(UTC)
    common = {"type": "episode", "source": {"kind": "customer_confirmed"}}
    a = container.gateway.write(
        AGENT,
        MemoryWrite.model_validate(
            {
                **common,
                "subject_id": "S-MERGE",
                "content": "Migrated the billing exports to Snowflake",
                "session_id": "sess-1",
                "expires_at": (now + timedelta(days=60)).isoformat(),
            }
        ),
    )
    b = container.gateway.write(
        AGENT,
        MemoryWrite.model_validate(
            {
                **common,
                "subject_id": "S-MERGE",
                "content": "Migrated billing exports to Snowflake.",
                "session_id": "sess-2",
                "sensitivity": "confidential",
                "expires_at": (now + timedelta(days=20)).isoformat(),
            }
        ),
    )
    assert b.decision.value == "duplicate"  # the gateway already dedupes; force a twin past it:
    with container.db.tenant_transaction(TENANT) as conn:
        conn.execute(
            """INSERT INTO memory_records (id, tenant_id, subject_id, scope, session_id, type, category, content, source,
                   actor, authority, authority_rank, confidence, sensitivity, sensitivity_rank, status, created_at,
                   effective_at, expires_at, lineage_keys, content_hash, embedding, embedding_model)
               SELECT 'mem_twin', tenant_id, subject_id, scope, 'sess-2', type, category, content,
                   '{"kind": "customer_confirmed", "reference": "sess-2"}', actor, authority, authority_rank,
                   confidence, 'confidential', 2, 'active', created_at + interval '1 second', effective_at,
                   %s, ARRAY['session:sess-2'], content_hash, embedding, embedding_model
                 FROM memory_records WHERE id = %s""",
            (now + timedelta(days=20), a.memory.id),
        )
    lifecycle(container, now).purge(tenants=[TENANT])
    with container.store.tenant(TENANT) as s:
        canonical = s.get_record(a.memory.id)
        twin = s.get_record("mem_twin")
    assert twin.status.value == "superseded" and twin.superseded_by_id == canonical.id
    assert canonical.status.value == "active"
    assert set(canonical.lineage_keys) == {"session:sess-1", "session:sess-2"}
    assert canonical.sensitivity.value == "confidential"
    assert abs((canonical.expires_at - (now + timedelta(days=20))).total_seconds()) < 1
    assert {p["id"] for p in canonical.value["consolidated_from"]} == {a.memory.id, "mem_twin"}


def test_observations_corroborated_by_independent_sessions_go_to_review_and_lone_ones_are_demoted(container):
    now = datetime.now(UTC)
    base = {"subject_id": "S-OBS", "type": "observation", "source": {"kind": "agent_inference"}}
    one = container.gateway.write(
        AGENT,
        MemoryWrite.model_validate(
            {**base, "content": "Client seems very risk-averse about equities", "session_id": "s1"}
        ),
    )
    two = container.gateway.write(
        AGENT,
        MemoryWrite.model_validate(
            {**base, "content": "The client appears quite risk averse regarding equities", "session_id": "s2"}
        ),
    )
    lone = container.gateway.write(
        AGENT,
        MemoryWrite.model_validate(
            {
                **base,
                "subject_id": "S-OBS-2",
                "content": "Might be planning to retire early",
                "session_id": "s3",
            }
        ),
    )
    assert one.decision.value == two.decision.value == "quarantined"
    report = lifecycle(container, now).purge(tenants=[TENANT])
    with container.store.tenant(TENANT) as s:
        promoted = [s.get_record(one.memory.id), s.get_record(two.memory.id)]
        demoted = s.get_record(lone.memory.id)
    assert all(p.status.value == "pending_approval" for p in promoted) and report.promoted >= 2
    assert demoted.status.value == "quarantined" and demoted.confidence < lone.memory.confidence


def _twin(container, source_id, twin_id, content, created_offset):
    """A near-duplicate the gateway would have refused: same vector, other wording, own hash."""
    with container.db.tenant_transaction(TENANT) as conn:
        conn.execute(
            """INSERT INTO memory_records (id, tenant_id, subject_id, scope, session_id, type, category, content, source,
                   actor, authority, authority_rank, confidence, sensitivity, sensitivity_rank, status, created_at,
                   effective_at, lineage_keys, content_hash, embedding, embedding_model)
               SELECT %(id)s, tenant_id, subject_id, scope, %(id)s, type, category, %(content)s, source, actor,
                   authority, authority_rank, confidence, sensitivity, sensitivity_rank, 'active',
                   created_at + %(offset)s, effective_at, ARRAY['session:' || %(id)s], md5(%(content)s),
                   embedding, embedding_model
                 FROM memory_records WHERE id = %(src)s""",
            {"id": twin_id, "content": content, "offset": created_offset, "src": source_id},
        )


def status_of(container, memory_id):
    with container.store.tenant(TENANT) as s:
        return s.get_record(memory_id).status.value


def test_near_duplicates_are_merged_incrementally_each_new_memory_against_its_subject(container):
    # Given an episode and a near-duplicate of it written a second later
    now = datetime.now(UTC)
    a = container.gateway.write(
        AGENT,
        MemoryWrite.model_validate(
            {
                "subject_id": "S-NEAR",
                "type": "episode",
                "content": "Upgraded the warehouse cluster to 16 nodes",
                "source": {"kind": "customer_confirmed"},
                "session_id": "near-1",
            }
        ),
    ).memory
    _twin(container, a.id, "mem_near_1", "Upgraded warehouse cluster to sixteen nodes", timedelta(seconds=1))
    _twin(container, a.id, "mem_near_3h", "The warehouse cluster went to 16 nodes", timedelta(hours=3))
    # When the nightly job runs
    lifecycle(container, now).purge(tenants=[TENANT])
    # Then the newer ones are folded into the older
    assert status_of(container, "mem_near_1") == "superseded"
    assert status_of(container, "mem_near_3h") == "superseded"
    # Given a near-duplicate written after that run, and one back-dated before its watermark
    _twin(container, a.id, "mem_near_2", "Cluster upgraded to 16 warehouse nodes", timedelta(hours=5))
    _twin(container, a.id, "mem_near_old", "Warehouse cluster now has 16 nodes", timedelta(days=-10))
    # When the job runs again
    lifecycle(container, now + timedelta(days=1)).purge(tenants=[TENANT])
    # Then the new one was compared and merged, and the pass did not re-scan what it had already seen
    assert status_of(container, "mem_near_2") == "superseded"
    assert status_of(container, "mem_near_old") == "active"
    assert status_of(container, a.id) == "active"


def test_lineage_is_mirrored_for_erasure_and_its_index_is_usable_under_row_level_security(container):
    # Given a memory with a lineage key, later given another one (as consolidation does)
    m = container.gateway.write(
        AGENT,
        MemoryWrite.model_validate(
            {
                "subject_id": "S-LIN",
                "type": "episode",
                "content": "Asked for the SOC 2 report before renewal",
                "source": {"kind": "customer_confirmed"},
                "session_id": "lin-1",
            }
        ),
    ).memory
    with container.db.tenant_transaction(TENANT) as conn:
        conn.execute(
            "UPDATE memory_records SET lineage_keys = lineage_keys || ARRAY['transcript:t-9'] WHERE id = %s",
            (m.id,),
        )
    # Then the mirror follows the array column
    with container.db.tenant_transaction(TENANT) as conn:
        keys = {
            r["lineage_key"]
            for r in conn.execute(
                "SELECT lineage_key FROM memory_lineage WHERE memory_id = %s", (m.id,)
            ).fetchall()
        }
        # And, as the application role under RLS, a lookup by key can use the B-tree (the GIN index
        # on the array could not: `@>` is not leakproof, so erasure scanned the whole table)
        conn.execute("SET LOCAL enable_seqscan = off")
        plan = "\n".join(
            r["QUERY PLAN"]
            for r in conn.execute(
                "EXPLAIN SELECT memory_id FROM memory_lineage WHERE tenant_id = %s AND lineage_key = ANY(%s)",
                (TENANT, ["session:lin-1", "transcript:t-9"]),
            ).fetchall()
        )
    assert keys == {"session:lin-1", "transcript:t-9"}
    assert "memory_lineage_pkey" in plan


def test_the_purge_pauses_after_each_batch_in_proportion_to_its_length(container):
    # Given five expired sentiments and a purge of batches of two with pause ratio 1
    now = datetime.now(UTC)
    for i in range(5):
        write(
            container,
            "S-PAUSE",
            f"Grumbled about invoice {i} being late again",
            expires_at=now + timedelta(seconds=1),
        )
    pauses: list[float] = []
    job = lifecycle(container, now + timedelta(minutes=1), batch_size=2)
    job.pause_ratio, job.sleep = 1.0, pauses.append
    # When it runs
    report = job.purge(tenants=[TENANT], consolidate=False)
    # Then it paused once per batch that did work, each pause as long as a batch can be
    assert report.expired >= 5
    assert len(pauses) >= 3 and all(0 < p <= report.longest_batch_ms / 1000 for p in pauses)
    # And at ratio 0 it never pauses, though it has work
    for i in range(3):
        write(
            container,
            "S-PAUSE",
            f"Annoyed that the renewal quote {i} arrived late",
            expires_at=now + timedelta(seconds=1),
        )
    again: list[float] = []
    quiet = lifecycle(container, now + timedelta(minutes=2), batch_size=2)
    quiet.sleep = again.append
    assert quiet.purge(tenants=[TENANT], consolidate=False).expired >= 3
    assert again == []


def test_a_closed_commitment_lives_until_closed_plus_retention_and_an_open_one_does_not_expire(container):
    # Given two follow-ups an agent made 40 days ago, one of which was closed 10 days ago
    now = datetime.now(UTC)
    made = now - timedelta(days=40)
    kept_open = write(
        container, "S-COMMIT", "I will send the data residency addendum", type="commitment", effective_at=made
    )
    done = write(
        container, "S-COMMIT", "I will book the quarterly review", type="commitment", effective_at=made
    )
    assert kept_open.memory.expires_at is None and done.memory.expires_at is None
    closer = CommitmentService(container.store, container.policies, clock=lambda: now - timedelta(days=10))
    closed = closer.close(AGENT, done.memory.id, outcome=CommitmentOutcome.DONE)
    assert closed.expires_at == now + timedelta(days=20)

    # When the purge runs before the retention ends, both stay; after it, only the open one stays
    lifecycle(container, now + timedelta(days=19)).purge()
    assert row(container, done.memory.id)["status"] == "active"
    lifecycle(container, now + timedelta(days=21)).purge()
    assert row(container, done.memory.id)["status"] == "expired"
    lifecycle(container, now + timedelta(days=3650)).purge()
    assert row(container, kept_open.memory.id)["status"] == "active"


def test_consolidation_never_merges_a_new_follow_up_into_a_closed_one_in_the_same_words(container):
    now = datetime.now(UTC)
    first = write(container, "S-COMMIT-2", "I will send the recap", type="commitment", effective_at=now)
    CommitmentService(container.store, container.policies).close(
        AGENT, first.memory.id, outcome=CommitmentOutcome.DONE
    )
    again = write(container, "S-COMMIT-2", "I will send the recap", type="commitment", effective_at=now)
    assert again.decision.value == "admitted"
    lifecycle(container, now + timedelta(hours=1)).purge()
    assert row(container, first.memory.id)["status"] == "active"
    assert row(container, again.memory.id)["status"] == "active"


_purge_tenants = itertools.count()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    memories=st.lists(
        st.fixed_dictionaries(
            {
                "subject": st.sampled_from(["S-P1", "S-P2"]),
                "expiring": st.booleans(),  # expires ten minutes from now, or keeps the policy TTL
                "held": st.booleans(),  # a legal hold on the record itself
            }
        ),
        min_size=1,
        max_size=6,
    ),
    subject_held=st.sampled_from([None, "S-P1", "S-P2"]),
)
def test_the_purge_expires_then_deletes_exactly_what_no_hold_protects_and_reruns_change_nothing(
    container, memories, subject_held
):
    # Given a fresh tenant's memories: some expiring, some held on their own or by their subject's hold
    tenant = f"purge-{next(_purge_tenants)}"
    agent = Principal(sub="agent", tenant_id=tenant, roles=frozenset({Role.AGENT}))
    dpo = Principal(sub="dpo", tenant_id=tenant, roles=frozenset({Role.PRIVACY_OFFICER}))
    now = datetime.now(UTC)
    ids = []
    for n, m in enumerate(memories):
        body = {
            "subject_id": m["subject"],
            "type": "episode",
            "content": f"Visit {n}: discussed topic number {n} with the advisor",
            "source": {"kind": "customer_confirmed"},
            "effective_at": now - timedelta(days=10),
            **({"expires_at": now + timedelta(minutes=10)} if m["expiring"] else {}),
        }
        ids.append(container.gateway.write(agent, MemoryWrite.model_validate(body)).memory.id)
        if m["held"]:
            container.lifecycle.set_record_hold(dpo, ids[-1], hold=True, reason="litigation LIT-9")
    if subject_held:
        container.lifecycle.set_subject_hold(dpo, subject_held, hold=True, reason="litigation LIT-9")

    def protected(m: dict) -> bool:
        return m["held"] or m["subject"] == subject_held

    def state(memory_id: str):
        with container.db.tenant_transaction(tenant) as conn:
            return conn.execute(
                "SELECT status, embedding IS NULL AS no_vec FROM memory_records WHERE id = %s", (memory_id,)
            ).fetchone()

    # When the nightly purge runs an hour later (inside the archive window)
    purge = lifecycle(container, now + timedelta(hours=1)).purge(tenants=[tenant])
    # Then exactly the expiring, unprotected memories are expired, and their vectors dropped
    for memory_id, m in zip(ids, memories, strict=True):
        expected = "expired" if m["expiring"] and not protected(m) else "active"
        assert dict(state(memory_id)) == {"status": expected, "no_vec": expected == "expired"}, m
    assert purge.expired == sum(m["expiring"] and not protected(m) for m in memories)
    # And when it runs after the archive window, exactly those are deleted, and nothing else changes
    later = now + timedelta(days=32)
    lifecycle(container, later).purge(tenants=[tenant])
    for memory_id, m in zip(ids, memories, strict=True):
        gone = m["expiring"] and not protected(m)
        assert (state(memory_id) is None) == gone, m
    # And running it again changes nothing
    again = lifecycle(container, later).purge(tenants=[tenant])
    assert (again.expired, again.deleted) == (0, 0)
    assert container.reads.verify_audit(tenant).ok
