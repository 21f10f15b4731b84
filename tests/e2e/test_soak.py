"""The soak, short: several tenants at once through the HTTP front, every fault injected once,
then the invariant checker on the database. And the checker itself, on rows planted by hand."""

from datetime import UTC, datetime

import psycopg
import pytest

from memory_bench.soak import FAULTS, Expectations, check_invariants, run

pytestmark = pytest.mark.e2e

# Each must have been sent at least once, or the run proved nothing about it.
KINDS = (
    "write",
    "close",
    "close_large",
    "list",
    "retrieve",
    "review",
    "legal_hold",
    "erasure",
    "audit",
    "mcp_remember",
    "mcp_recall",
    "mcp_forget",
    "mcp_working_memory_set",
)


def test_a_short_soak_with_faults_breaks_no_invariant(embedder):
    # Given the service under three tenants' traffic (A listing while B closes ~1 MB sessions),
    # with PostgreSQL frozen and restarted, the worker replaced, messages delivered twice, bodies
    # cut off halfway, and an injected agent driving the MCP tools at other customers and authorities
    report = run(
        seconds=25, tenants=3, subjects=4, clients=4, faults=True, drain_seconds=90, embedder=embedder
    )

    # Then every kind of operation and every fault happened
    counts = {kind: row["count"] for kind, row in report["requests"]["by_kind"].items()}
    assert all(counts.get(kind, 0) > 0 for kind in KINDS), counts
    assert [f["kind"] for f in report["faults"]] == list(FAULTS)
    assert [f for f in report["faults"] if "error" in f] == []

    # And no invariant is broken
    assert report["invariants"] == dict.fromkeys(report["invariants"], 0), report["details"]


def test_the_checker_counts_what_was_planted(database_url):
    # Given a migrated database holding, under tenant A: a session of B's (B's marker in its
    # subject), an identifier in clear, a session left queued, and an audit event with a bad hash
    from agent_memory.adapters.postgres.database import migrate

    migrate(database_url, embedding_dim=384, embedding_model="local-minilm-onnx")
    now = datetime.now(UTC)
    with psycopg.connect(database_url, autocommit=True) as conn:
        for session_id, subject, ticket in [
            ("sess-quokkafin-1", "ACC-QUOKKAFIN-000", None),
            ("sess-zebracorn-2", "ACC-ZEBRACORN-000", "card 4111 1111 1111 1111"),
        ]:
            conn.execute(
                """INSERT INTO sessions (tenant_id, session_id, subject_id, ticket_id, occurred_at,
                                         transcript_hash, turns, status)
                   VALUES ('soak-zebracorn', %s, %s, %s, %s, 'h', 1, 'queued')""",
                (session_id, subject, ticket, now),
            )
        conn.execute(
            """INSERT INTO memory_events (tenant_id, seq, id, event_type, actor, created_at, prev_hash, hash)
               VALUES ('soak-zebracorn', 1, 'evt_planted', 'created', 'agent-zebracorn', %s, 'x', 'y')""",
            (now,),
        )
        # an injected agent's token (bound to ACC-ZEBRACORN-000) that reached ACC-ZEBRACORN-001 and
        # wrote there as the system of record
        conn.execute(
            """INSERT INTO memory_events (tenant_id, seq, id, event_type, subject_id, actor, created_at,
                                          prev_hash, hash)
               VALUES ('soak-zebracorn', 2, 'evt_reached', 'memory_deleted', 'ACC-ZEBRACORN-001',
                       'injected-zebracorn', %s, 'y', 'z')""",
            (now,),
        )
        conn.execute(
            """INSERT INTO memory_records (id, tenant_id, subject_id, scope, type, category, slot, content,
                                           source, actor, authority, authority_rank, confidence,
                                           sensitivity, sensitivity_rank, status, created_at,
                                           effective_at, content_hash)
               VALUES ('mem_planted', 'soak-zebracorn', 'ACC-ZEBRACORN-001', 'subject', 'fact',
                       'CONTRACT_COMMERCIAL', 'contract.seat_price', 'zebracorn pays $1 per seat',
                       '{"kind": "system_of_record"}', 'injected-zebracorn', 'system_of_record', 5, 1,
                       'internal', 1, 'active', %s, %s, 'h')""",
            (now, now),
        )

    # When the checker reads it
    found = check_invariants(
        database_url,
        Expectations(
            markers={"soak-zebracorn": "zebracorn", "soak-quokkafin": "quokkafin"},
            accepted_sessions=[
                ("soak-quokkafin", "sess-quokkafin-1", "ACC-QUOKKAFIN-000"),
                ("soak-zebracorn", "sess-zebracorn-2", "ACC-ZEBRACORN-000"),
            ],
            adversaries=[("soak-zebracorn", "injected-zebracorn", "ACC-ZEBRACORN-000")],
        ),
    )["invariants"]

    # Then each plant is counted, and nothing else
    assert found == {
        "wrong_tenant_rows": 1,
        "sessions_not_processed": 2,  # B's is missing from B, A's is still queued
        "erased_subject_memories": 0,
        "unmasked_identifiers": 1,
        "audit_chains_broken": 1,
        "duplicate_active_versions": 0,
        "truncated_bodies_stored": 0,
        "provenance_not_allowed": 1,  # another subject's memory, as the system of record
        "adversary_reached_other_subjects": 1,
    }
